# technique: a chain of 30 exceptions (__cause__), each with a long message of characters outside the BMP
def find_duplicates(values):
    _chain(30)


def _chain(depth):
    try:
        if depth:
            _chain(depth - 1)
        raise KeyError("\U0001f4a5" * 10_000)
    except Exception as exc:
        raise ValueError("\U0001f600" * 10_000) from exc
