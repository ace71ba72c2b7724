# expect: failed
# technique: raises KeyboardInterrupt
def find_duplicates(values):
    raise KeyboardInterrupt
