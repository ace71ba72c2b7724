import pytest

from solution import ParseError, load, parse, plugin, reraised, validate_all


def test_notes():
    with pytest.raises(ParseError, match="must be positive") as info:
        parse("-1")
    assert info.value.__notes__ == ["hint: numbers must be positive"]
    assert info.value.args == ("cannot parse '-1'",)


def test_group_members():
    with pytest.raises(ExceptionGroup) as info:
        validate_all([1, -2, 0, -4])
    group = info.value
    assert group.message == "invalid items"
    assert [type(e) for e in group.exceptions] == [ValueError, TypeError, ValueError]
    assert [str(e) for e in group.exceptions] == ["item 1 is negative", "item 2 is zero", "item 3 is negative"]
    values = group.subgroup(ValueError)
    assert len(values.exceptions) == 2
    match, rest = group.split(TypeError)
    assert len(match.exceptions) == 1 and len(rest.exceptions) == 2
    assert info.group_contains(TypeError, match="zero")


def test_except_star():
    seen = []
    try:
        validate_all([-1, 0])
    except* ValueError as eg:
        seen.append(("value", len(eg.exceptions)))
    except* TypeError as eg:
        seen.append(("type", len(eg.exceptions)))
    assert seen == [("value", 1), ("type", 1)]


def test_chain():
    with pytest.raises(RuntimeError) as info:
        reraised()
    assert isinstance(info.value.__cause__, KeyError)
    assert info.value.__context__ is info.value.__cause__
    assert info.value.__suppress_context__ is True


def test_builtin_fields_outside_args():
    with pytest.raises(FileNotFoundError) as info:
        load("data.csv")
    assert (info.value.errno, info.value.strerror, info.value.filename) == (2, "No such file or directory", "data.csv")
    assert info.value.args == (2, "No such file or directory")
    with pytest.raises(ImportError, match="no plugin x") as imp:
        plugin("x")
    assert (imp.value.name, imp.value.path) == ("x", "/plugins")
