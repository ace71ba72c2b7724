# expect: failed
# technique: fills the scratch disk
def find_duplicates(values):
    try:
        with open("/tmp/fill", "wb") as fh:
            while True:
                fh.write(b"x" * (1 << 20))
    except OSError:
        pass
    return []
