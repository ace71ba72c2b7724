# Orders duplicates by their FIRST occurrence instead of their second.
def find_duplicates(values):
    result = []
    for i, value in enumerate(values):
        if value in values[i + 1 :] and value not in result:
            result.append(value)
    return result
