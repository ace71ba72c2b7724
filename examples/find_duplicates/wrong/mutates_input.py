# Right answer, but empties the caller's list while computing it.
def find_duplicates(values):
    seen, result = [], []
    while values:
        value = values.pop(0)
        if value in seen:
            if value not in result:
                result.append(value)
        else:
            seen.append(value)
    return result
