# expect: passed
# technique: (honest) a numeric type and a context manager work through their operators and `with`
class Money:
    def __init__(self, cents):
        self.cents = cents

    def __add__(self, other):
        if isinstance(other, Money):
            return Money(self.cents + other.cents)
        if isinstance(other, int):
            return Money(self.cents + other)
        return NotImplemented

    __radd__ = __add__

    def __neg__(self):
        return Money(-self.cents)

    def __int__(self):
        return self.cents

    def __format__(self, spec):
        return format(self.cents / 100, spec)


class Opened:
    def __init__(self):
        self.log = []

    def __enter__(self):
        self.log.append("enter")
        return self

    def __exit__(self, exc_type, exc, tb):
        self.log.append("exit" if exc_type is None else f"exit {exc_type.__name__}")
        return exc_type is KeyError


def money(c):
    return Money(c)


def opened():
    return Opened()
