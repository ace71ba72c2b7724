class Account:
    currency = "EUR"

    def __init__(self, owner, balance=0):
        self.owner = owner
        self._balance = balance

    @property
    def balance(self):
        return self._balance

    @classmethod
    def from_string(cls, text):
        owner, amount = text.split(":")
        return cls(owner, int(amount))

    def deposit(self, amount):
        self._balance += amount

    def withdraw(self, amount):
        if amount > self._balance:
            raise ValueError("insufficient funds")
        self._balance -= amount
