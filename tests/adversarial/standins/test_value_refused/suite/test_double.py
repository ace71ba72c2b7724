import pytest
from solution import double


class Opaque:
    pass


def test_rejects_other_types():
    with pytest.raises(TypeError):
        double(Opaque())
