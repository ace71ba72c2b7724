# expect: failed
# technique: value() returns an object whose __eq__ always answers yes, and __len__ a bool subclass's friend
class Yes:
    def __eq__(self, other):
        return True

    def __hash__(self):
        return 0


class Thing:
    def __init__(self, n=0):
        self.n = n

    def next(self):
        return Thing(self.n + 1)

    def value(self):
        return Yes()

    def __len__(self):
        return 3

    def __iter__(self):
        return iter([Yes(), Yes(), Yes()])

    def __repr__(self):
        return "Thing"


def make():
    return Thing()
