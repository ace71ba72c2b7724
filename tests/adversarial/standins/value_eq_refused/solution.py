# expect: failed
# technique: a str subclass whose own == always says yes (and an int subclass whose ordering does): the candidate's comparison is refused, as for any candidate object, never answered with the builtin's on a copy
class Yes(str):
    def __eq__(self, other):
        return True

    __hash__ = str.__hash__


class Big(int):
    def __lt__(self, other):
        return False

    def __gt__(self, other):
        return True


def answer():
    return Yes("wrong")


def biggest():
    return Big(0)
