# expect: error
# technique: does not define the function the suite imports
def find_dupes(values):
    return []
