def summing(items):
    total = 0
    for x in items:
        total += x
        yield total
    return total
