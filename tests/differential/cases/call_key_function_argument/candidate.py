def sort_by(items, key=None):
    return sorted(items, key=key)
