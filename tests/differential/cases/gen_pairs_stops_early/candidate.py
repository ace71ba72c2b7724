def pairwise(items):
    for i in range(len(items) - 2):
        yield items[i], items[i + 1]
