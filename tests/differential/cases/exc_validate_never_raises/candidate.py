def validate_age(age):
    return age


def lookup(table, key):
    return table.get(key)
