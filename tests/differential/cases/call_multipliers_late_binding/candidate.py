def make_multipliers(n):
    return [lambda x: x * i for i in range(n)]  # noqa: B023 - the bug under test
