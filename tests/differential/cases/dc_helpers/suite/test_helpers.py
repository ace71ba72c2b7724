import dataclasses

from solution import Point


def test_asdict():
    assert dataclasses.asdict(Point(1, 2)) == {"x": 1, "y": 2}


def test_replace():
    q = dataclasses.replace(Point(1, 2), y=7)
    assert (q.x, q.y) == (1, 7)


def test_field_names():
    assert [f.name for f in dataclasses.fields(Point)] == ["x", "y"]
