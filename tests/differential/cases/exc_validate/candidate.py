def validate_age(age):
    if age < 0:
        raise ValueError("negative age")
    return age


def lookup(table, key):
    return table[key]
