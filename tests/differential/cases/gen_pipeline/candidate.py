def evens(numbers):
    for n in numbers:
        if n % 2 == 0:
            yield n


def squares(numbers):
    for n in numbers:
        yield n * n


def risky(limit):
    yield from range(limit)
    raise ValueError("ran past the limit")
