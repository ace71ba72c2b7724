# expect: failed
# technique: returns a list subclass with a forged __eq__
class Liar(list):
    def __eq__(self, other):
        return True

    def __len__(self):
        return 0

    def __iter__(self):
        return iter(())

    def __repr__(self):
        return "[2, 1]"


def find_duplicates(values):
    return Liar()
