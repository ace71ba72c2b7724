# expect: failed
# technique: the function takes the wrong arguments
def find_duplicates():
    return []
