# expect: failed
# technique: returns an object whose __eq__ always answers True
class AlwaysEqual:
    def __eq__(self, other):
        return True

    def __ne__(self, other):
        return False

    __hash__ = object.__hash__


def find_duplicates(values):
    return AlwaysEqual()
