# Reports a value once per extra occurrence instead of once.
def find_duplicates(values):
    seen, result = [], []
    for value in values:
        if value in seen:
            result.append(value)
        else:
            seen.append(value)
    return result
