import pytest
from solution import OldApiWarning, noisy, old


def test_pytest_warns():
    with pytest.warns(DeprecationWarning, match="deprecated"):
        assert old(1) == 2


def test_custom_category():
    with pytest.warns(OldApiWarning):
        old(1)


def test_recwarn(recwarn):
    noisy()
    assert len(recwarn) == 1
    assert issubclass(recwarn[0].category, UserWarning)
    assert "careful" in str(recwarn[0].message)
