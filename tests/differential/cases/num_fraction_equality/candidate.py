from fractions import Fraction


def harmonic(n):
    return sum((Fraction(1, k) for k in range(1, n + 1)), Fraction(0))
