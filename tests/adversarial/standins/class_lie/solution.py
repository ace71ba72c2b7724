# expect: failed
# plain: failed
# technique: the object's type says its __class__ is int: isinstance(obj, int) is True for the real object, the handle said False
class Shape:
    @property
    def __class__(self):
        return int


def make():
    return Shape()
