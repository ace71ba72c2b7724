from solution import summarize

RECORDS = [("a", ["x", "y"]), ("b", ["y"])]


def test_values():
    out = summarize(RECORDS)
    assert out["tags"] == {"x": frozenset({"a"}), "y": frozenset({"a", "b"})}
    assert out["names"] == ("a", "b")
    assert out["pairs"] == {("a", 2), ("b", 1)}
    assert out["blob"] == b"a|b"
    assert out["nothing"] is None
    assert out["z"] == 2 - 1j


def test_exact_types():
    out = summarize(RECORDS)
    assert type(out["tags"]["x"]) is frozenset
    assert type(out["names"]) is tuple
    assert type(out["blob"]) is bytes
    assert type(out["z"]) is complex
