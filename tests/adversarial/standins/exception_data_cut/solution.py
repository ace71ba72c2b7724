# expect: failed
# plain: failed
# technique: an exception's args too large to cross were rebuilt from its message cut to 4000 characters, a chain longer than 3 was cut (now: longer than wire.MAX_CHAIN), and OSError's filename (outside args) was dropped: a short message, a chain that ends
def validate(n):
    raise ValueError("x" * 20_000)


def chained(depth):
    try:
        if depth == 0:
            raise KeyError("root")
        chained(depth - 1)
    except Exception as exc:
        raise RuntimeError(f"level {depth}") from exc


def open_data():
    raise FileNotFoundError(2, "No such file or directory", "data.csv")
