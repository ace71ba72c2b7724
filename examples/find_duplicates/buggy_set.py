# The tutorial's first attempt: right for integers, a TypeError for unhashable values.
def find_duplicates(values):
    seen = set()
    duplicates = []
    for value in values:
        if value in seen and value not in duplicates:
            duplicates.append(value)
        seen.add(value)
    return duplicates
