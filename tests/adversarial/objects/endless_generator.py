# expect: timeout
# technique: make() is a generator that never ends, so a test that lists it would wait forever
def make():
    n = 0
    while True:
        yield n
        n += 1
