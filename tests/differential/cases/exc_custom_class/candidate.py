class InsufficientFunds(Exception):
    def __init__(self, needed):
        super().__init__(f"need {needed} more")
        self.needed = needed


class Wallet:
    def __init__(self, amount):
        self.amount = amount

    def pay(self, price):
        if price > self.amount:
            raise InsufficientFunds(price - self.amount)
        self.amount -= price
