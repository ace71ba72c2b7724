import cmath


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def median(xs):
    s = sorted(xs)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else s[mid - 1]


def roots(a, b, c):
    d = cmath.sqrt(b * b - 4 * a * c)
    return ((-b + d) / (2 * a), (-b - d) / (2 * a))
