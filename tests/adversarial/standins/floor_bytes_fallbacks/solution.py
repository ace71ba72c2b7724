# expect: failed
# plain: failed
# technique: __floor__, __ceil__ and __bytes__ are wrong, but __float__ and __iter__ are right: a handle without the first three made Python fall back on the others
class Amount:
    def __init__(self, x):
        self.x = x

    def __float__(self):
        return float(self.x)

    def __floor__(self):
        return 999

    def __ceil__(self):
        return 999


class Blob:
    def __init__(self, data):
        self.data = data

    def __bytes__(self):
        return b"forged"

    def __iter__(self):
        return iter(self.data)


def amount(x):
    return Amount(x)


def blob(data):
    return Blob(data)
