# expect: passed
# technique: (honest) an answer holding the candidate's hashable objects as dict keys or set members: rebuilding it hashes them, a request made while the call's own was still held, which waited for itself for ever (the run hung)
class Key:
    def __init__(self, n):
        self.n = n

    def __hash__(self):
        return self.n


def keyed():
    return {Key(1): "a", Key(2): "b"}


def members():
    return {Key(3)}
