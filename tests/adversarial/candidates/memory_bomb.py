# expect: oom
# technique: allocates until the memory limit
def find_duplicates(values):
    hog = []
    while True:
        hog.append(b"x" * (16 << 20))
