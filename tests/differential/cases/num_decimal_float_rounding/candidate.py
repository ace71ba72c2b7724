from decimal import Decimal


def add_prices(prices):
    return sum((Decimal(p) for p in prices), Decimal("0"))


def round_money(text):
    return Decimal(str(round(float(text), 2)))
