import pytest
from solution import Account


def test_deposit_and_withdraw():
    a = Account("ada", 100)
    a.deposit(50)
    a.withdraw(30)
    assert a.balance == 120


def test_overdraft_is_refused():
    a = Account("ada", 10)
    with pytest.raises(ValueError):
        a.withdraw(11)
    assert a.balance == 10


def test_alternative_constructor():
    a = Account.from_string("bob:75")
    assert (a.owner, a.balance) == ("bob", 75)


def test_class_attribute():
    assert Account.currency == "EUR"
    assert isinstance(Account("x"), Account)
