# expect: failed
class Sneaky:
    pass


def find_duplicates(values):
    values.append(Sneaky())
    return []
