import pytest
from solution import Ledger


def test_commit():
    ledger = Ledger()
    with ledger.transaction() as tx:
        tx.add(5)
    assert ledger.balance == 5


def test_rollback_on_error():
    ledger = Ledger()
    ledger.add(1)
    with pytest.raises(RuntimeError), ledger.transaction():
        ledger.add(100)
        raise RuntimeError("abort")
    assert ledger.balance == 1
