def normalize(values):
    total = sum(values)
    for i, v in enumerate(values):
        values[i] = v / total
    return list(values)
