from solution import Inventory, Point


def test_fields_and_repr():
    p = Point(3, 4)
    assert (p.x, p.y, p.dist()) == (3, 4, 5.0)
    assert repr(p) == "Point(x=3, y=4)"


def test_default_factory_gives_each_its_own_list():
    a, b = Inventory("a"), Inventory("b")
    a.add("sword")
    assert a.items == ["sword"] and b.items == []
