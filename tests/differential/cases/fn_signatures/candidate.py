def format_name(first, last, *, middle=None, upper=False):
    parts = [first] + ([middle] if middle else []) + [last]
    name = " ".join(parts)
    return name.upper() if upper else name


def total(*numbers, start=0):
    return start + sum(numbers)


def describe(**fields):
    return sorted(fields.items())
