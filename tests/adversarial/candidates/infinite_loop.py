# expect: timeout
def find_duplicates(values):
    while True:
        pass
