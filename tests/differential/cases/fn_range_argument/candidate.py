def window_sums(values, k):
    values = list(values)
    return [sum(values[i : i + k]) for i in range(len(values) - k + 1)]
