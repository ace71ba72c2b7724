import dataclasses

import pytest
from solution import Point


def test_is_frozen():
    p = Point(1, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.x = 5
