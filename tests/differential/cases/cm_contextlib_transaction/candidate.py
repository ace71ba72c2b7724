from contextlib import contextmanager


class Ledger:
    def __init__(self):
        self.balance = 0

    def add(self, amount):
        self.balance += amount

    @contextmanager
    def transaction(self):
        saved = self.balance
        try:
            yield self
        except Exception:
            self.balance = saved
            raise
