"""Unit tests of the trusted side's pure helpers (the process plumbing is tested in the sandbox)."""

from __future__ import annotations

from typing import Any

import pytest

from verifier.runner import proxy


def test_in_place_mutation_is_carried_back() -> None:
    values: list[Any] = [[1], 2, [1], 2]
    proxy._sync_in_place(values, [[1, 9], 2, [1], 2, 5])
    assert values == [[1, 9], 2, [1], 2, 5]
    values = [[1], 2]
    inner = values[0]
    proxy._sync_in_place(values, [[1, 9], 3])
    assert values == [[1, 9], 3]
    assert values[0] is inner  # the test's own nested object changed in place
    d: dict[str, Any] = {"a": [1], "b": 2}
    proxy._sync_in_place(d, {"a": [], "c": 3})
    assert d == {"a": [], "c": 3}
    s = {1, 2}
    proxy._sync_in_place(s, {3})
    assert s == {3}


def test_unchanged_arguments_stay_identical() -> None:
    values = [1, 1.0, True]
    proxy._sync_in_place(values, [1, 1.0, True])
    assert [type(v) for v in values] == [int, float, bool]


@pytest.mark.parametrize(
    ("reply", "cls", "text"),
    [
        (
            {
                "raised": "TypeError",
                "mro": ["TypeError", "Exception", "BaseException", "object"],
                "message": "m",
            },
            TypeError,
            "m",
        ),
        (
            {
                "raised": "MyError",
                "mro": ["ValueError", "Exception", "BaseException", "object"],
                "message": "m",
            },
            ValueError,
            "MyError: m",
        ),
        (
            {
                "raised": "SystemExit",
                "mro": ["SystemExit", "BaseException", "object"],
                "message": "0",
            },
            proxy.CandidateRaised,
            "SystemExit",
        ),
        (
            {
                "raised": "KeyboardInterrupt",
                "mro": ["KeyboardInterrupt", "BaseException", "object"],
                "message": "",
            },
            proxy.CandidateRaised,
            "KeyboardInterrupt",
        ),
    ],
)
def test_candidate_exceptions_map_to_builtins_but_never_to_exits(reply: dict[str, Any], cls: type, text: str) -> None:
    exc = proxy._rebuild_exception(reply)
    assert type(exc) is cls
    assert text in str(exc)
    assert isinstance(exc, Exception)  # never a BaseException that could end the trusted run


def test_faults_escape_pytest_raises_exception() -> None:
    """A crash must not pass for an expected error: faults are not Exceptions."""
    for fault in (
        proxy.CandidateDied,
        proxy.CandidateTimeout,
        proxy.NotPlainData,
        proxy.CandidateOOM,
    ):
        assert not issubclass(fault, Exception)


def test_a_handle_refuses_to_be_compared_or_hashed() -> None:
    from verifier.runner.handles import Handle, HandleCompared, remote_class

    session = object.__new__(proxy.CandidateSession)  # never asked: nothing here may reach the candidate
    h = Handle(session, ["H", 1], 1, "LRU", [])  # type: ignore[arg-type]
    for compare in (lambda: h == 1, lambda: h == 1, lambda: h != h, lambda: h < 2, lambda: hash(h), lambda: {h: 1}):
        with pytest.raises(HandleCompared, match="cannot be compared"):
            compare()
    assert h in [h]  # identity, which Python checks before ==, needs no answer from the candidate
    cls = remote_class(Handle(session, ["N", ["solution", "LRU"]], None, "LRU", []), "LRU")  # type: ignore[arg-type]
    assert not isinstance([1], cls) and not isinstance(3, cls)  # plain data is never a candidate object
    with pytest.raises(HandleCompared):
        _ = cls == cls


def test_mutation_carry_back_never_asks_a_handle_for_equality() -> None:
    from verifier.runner.handles import Handle

    session = object.__new__(proxy.CandidateSession)
    a = Handle(session, ["H", 1], 1, "T", [])  # type: ignore[arg-type]
    same = Handle(session, ["H", 1], 1, "T", [])  # type: ignore[arg-type]
    other = Handle(session, ["H", 2], 1, "T", [])  # type: ignore[arg-type]
    values = [a, 1]
    proxy._sync_in_place(values, [same, 1])
    assert values[0] is a  # the same reference: left as it was
    proxy._sync_in_place(values, [other, 1])
    assert values[0] is other
