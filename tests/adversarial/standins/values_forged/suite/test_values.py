from solution import name, num, point, shadowed


def test_upper():
    assert name().upper() == "AB"


def test_str():
    assert str(name()) == "ab"


def test_instance_attribute():
    assert shadowed().upper() == "AB"


def test_len():
    assert len(point()) == 2


def test_iteration():
    assert list(point()) == [1, 2]


def test_items():
    assert point()[0] == 1


def test_contains():
    assert 1 in point()


def test_int():
    assert int(num()) == 1


def test_module_constant():
    from solution import CONSTANT

    assert CONSTANT.upper() == "AB" or str(CONSTANT) == "ab"
