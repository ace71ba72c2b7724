# expect: failed
def find_duplicates(values):
    raise ValueError("A" * 20_000_000)
