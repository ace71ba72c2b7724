# expect: timeout
# technique: an infinite loop
def find_duplicates(values):
    while True:
        pass
