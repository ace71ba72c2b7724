class Money:
    def __init__(self, cents):
        self.cents = cents

    def __repr__(self):
        return f"Money({self.cents})"

    def __str__(self):
        return f"{self.cents // 100}.{self.cents % 100:02d} EUR"

    def __format__(self, spec):
        if spec == "short":
            return f"{self.cents / 100:g}"
        return str(self)
