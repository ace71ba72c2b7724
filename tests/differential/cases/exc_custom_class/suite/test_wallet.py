import pytest
from solution import InsufficientFunds, Wallet


def test_pay():
    w = Wallet(10)
    w.pay(4)
    assert w.amount == 6


def test_raises_its_own_exception():
    with pytest.raises(InsufficientFunds):
        Wallet(1).pay(5)
