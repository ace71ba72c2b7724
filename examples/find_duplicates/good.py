def find_duplicates(values):
    """Each value that occurs more than once, once, in order of its second occurrence.

    Works for unhashable values (lists, dicts) by comparing with ==; does not mutate `values`.
    """
    seen = []
    duplicates = []
    for value in values:
        if value in seen:
            if value not in duplicates:
                duplicates.append(value)
        else:
            seen.append(value)
    return duplicates
