import pytest

from solution import chained, open_data, validate


def test_message_is_short():
    with pytest.raises(ValueError) as info:
        validate(1)
    assert len(info.value.args[0]) <= 4000


def test_chain_is_short():
    with pytest.raises(RuntimeError) as info:
        chained(20)
    assert info.value.__cause__.__cause__.__cause__.__cause__ is None


def test_no_file_named():
    with pytest.raises(FileNotFoundError) as info:
        open_data()
    assert info.value.filename is None
