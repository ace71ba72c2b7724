from solution import answer, biggest


def test_eq():
    assert answer() == "right"


def test_order():
    assert biggest() > 10
