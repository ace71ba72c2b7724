# expect: passed
# technique: (honest) custom exception classes, their args, attributes and chains, as pytest.raises sees them with plain pytest
class BankError(Exception):
    pass


class InsufficientFunds(BankError, ValueError):
    def __init__(self, balance, amount):
        super().__init__(balance, amount)
        self.balance = balance
        self.amount = amount

    def __str__(self):
        return f"balance {self.balance} < {self.amount}"


def withdraw(balance, amount):
    if amount > balance:
        raise InsufficientFunds(balance, amount)
    return balance - amount


def lookup(d, key):
    try:
        return d[key]
    except KeyError as exc:
        raise LookupError(f"missing {key}") from exc


def decode(data):
    return data.decode("utf-8")
