import pytest
from solution import money, opened


def test_arithmetic():
    a = money(150) + money(50)
    assert int(a) == 200
    assert int(1 + a) == 201
    assert int(-a) == -200
    assert f"{a:.2f}" == "2.00"
    assert int(sum([money(1), money(2)], money(0))) == 3


def test_context_manager():
    cm = opened()
    with cm as inner:
        assert inner.log == ["enter"]
    assert cm.log == ["enter", "exit"]
    with cm:
        raise KeyError("suppressed")
    assert cm.log[-1] == "exit KeyError"
    with pytest.raises(ValueError):
        with cm:
            raise ValueError("not suppressed")
