# expect: failed
# technique: a 20 MB exception message
def find_duplicates(values):
    raise ValueError("A" * 20_000_000)
