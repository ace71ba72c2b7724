# expect: failed
# technique: the suite checks the result is unhashable with pytest.raises(TypeError); the refusal of hash() was an ordinary TypeError
class Bag:
    def __init__(self):
        self.items = []

    def add(self, x):
        self.items.append(x)


def make():
    return Bag()
