from units import to_cm


def perimeter(sides, unit):
    return sum(to_cm(s, unit) for s in sides)
