# expect: failed
def find_duplicates(values):
    raise SystemExit(0)
