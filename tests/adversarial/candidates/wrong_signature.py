# expect: failed
def find_duplicates():
    return []
