FACTORS = {"m": 1000, "cm": 1, "mm": 0.1}


def to_cm(value, unit):
    return value * FACTORS[unit]
