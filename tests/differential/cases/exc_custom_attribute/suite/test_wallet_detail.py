import pytest
from solution import Wallet


def test_message():
    with pytest.raises(Exception, match="need 4 more"):
        Wallet(1).pay(5)


def test_exception_carries_the_shortfall():
    with pytest.raises(Exception) as info:
        Wallet(1).pay(5)
    assert info.value.needed == 4
