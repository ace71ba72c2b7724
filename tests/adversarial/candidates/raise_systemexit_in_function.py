# expect: failed
# technique: raises SystemExit(0) inside the function
def find_duplicates(values):
    raise SystemExit(0)
