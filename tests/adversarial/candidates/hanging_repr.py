# expect: failed timeout
# technique: returns an object whose __repr__ never returns
class Hang:
    def __repr__(self):
        while True:
            pass

    def __eq__(self, other):
        return True


def find_duplicates(values):
    return [Hang()]
