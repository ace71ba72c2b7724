def parse_age(text):
    value = int(text)
    if value < 0:
        raise ValueError(f"age cannot be negative: {value}")
    return value


def safe_ratio(a, b, strict=False):
    if b == 0 and not strict:
        return float("inf")
    return a / b
