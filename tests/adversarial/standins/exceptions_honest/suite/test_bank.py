import pytest
from solution import BankError, InsufficientFunds, decode, lookup, withdraw


def test_custom_exception_class():
    with pytest.raises(InsufficientFunds, match="balance 5 < 10") as info:
        withdraw(5, 10)
    assert info.value.balance == 5 and info.value.amount == 10
    assert info.value.args == (5, 10)
    assert isinstance(info.value, BankError) and isinstance(info.value, ValueError)


def test_base_class_catches():
    with pytest.raises(BankError):
        withdraw(1, 2)
    with pytest.raises(ValueError):
        withdraw(1, 2)


def test_chain():
    with pytest.raises(LookupError, match="missing a") as info:
        lookup({}, "a")
    assert isinstance(info.value.__cause__, KeyError)
    assert info.value.__cause__.args == ("a",)


def test_unicode_error():
    with pytest.raises(UnicodeDecodeError):
        decode(b"\xff")
