# expect: oom
def find_duplicates(values):
    hog = []
    while True:
        hog.append(b"x" * (16 << 20))
