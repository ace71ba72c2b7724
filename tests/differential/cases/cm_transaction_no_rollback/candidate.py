from contextlib import contextmanager


class Ledger:
    def __init__(self):
        self.balance = 0

    def add(self, amount):
        self.balance += amount

    @contextmanager
    def transaction(self):
        saved = self.balance
        assert saved is not None
        yield self
