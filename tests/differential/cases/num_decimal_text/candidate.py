from decimal import ROUND_HALF_UP, Decimal


def add_prices(prices):
    return sum((Decimal(p) for p in prices), Decimal("0"))


def round_money(text):
    return Decimal(text).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
