# expect: error
def find_dupes(values):
    return []
