# expect: failed
# technique: leaves a non-plain object inside its argument
class Sneaky:
    pass


def find_duplicates(values):
    values.append(Sneaky())
    return []
