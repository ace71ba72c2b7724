# expect: passed
# technique: (honest) a type with __eq__ and no __hash__ is unhashable: hash() says so as Python does
class Bag:
    def __init__(self):
        self.items = []

    def __eq__(self, other):
        return isinstance(other, Bag) and self.items == other.items


def make():
    return Bag()
