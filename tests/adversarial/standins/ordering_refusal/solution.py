# expect: failed
# technique: the suite expects records to be unorderable (TypeError); the candidate's type orders them, and the verifier's refusal was a TypeError
class Record:
    def __init__(self, n):
        self.n = n

    def __lt__(self, other):
        return True


def make(n):
    return Record(n)
