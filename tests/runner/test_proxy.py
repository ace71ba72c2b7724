"""Unit tests of the trusted side's pure helpers (the process plumbing is tested in the sandbox)."""

from __future__ import annotations

import collections.abc
from typing import Any

import pytest

from verifier.runner import proxy
from verifier.runner.faults import ControlFlowEscaped, HandleRefused
from verifier.runner.handles import Handle, make_handle, remote_class
from verifier.runner.rebuilt import CandidateClasses


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


def _rebuild(reply: dict[str, Any]) -> BaseException:
    return CandidateClasses().rebuild(reply, lambda tag, body: None)


@pytest.mark.parametrize(
    ("reply", "cls", "text"),
    [
        (
            {"raised": "TypeError", "mro": ["TypeError", "Exception", "BaseException", "object"], "message": "m"},
            TypeError,
            "m",
        ),
        (
            {
                "raised": "MyError",
                "mro": ["ValueError", "Exception", "BaseException", "object"],
                "classes": [["solution", "MyError", ["ValueError"]]],
                "message": "m",
                "args": ["L", ["m"]],
            },
            ValueError,
            "m",
        ),
        # No constructor from a message: the nearest ancestor that has one.
        (
            {
                "raised": "UnicodeDecodeError",
                "mro": ["UnicodeDecodeError", "UnicodeError", "ValueError"],
                "message": "x",
            },
            UnicodeError,
            "x",
        ),
    ],
)
def test_candidate_exceptions_are_rebuilt_as_their_classes(reply: dict[str, Any], cls: type, text: str) -> None:
    exc = _rebuild(reply)
    assert isinstance(exc, cls)
    assert str(exc) == text
    assert exc.verifier_candidate_raised == cls.__name__  # type: ignore[attr-defined]


def test_a_candidate_class_is_one_class_per_run_with_its_bases() -> None:
    classes = CandidateClasses()
    bank = {"mro": ["Exception", "BaseException", "object"], "classes": [["solution", "BankError", ["Exception"]]]}
    funds = {
        "mro": ["ValueError", "Exception", "BaseException", "object"],
        "classes": [
            ["solution", "InsufficientFunds", [["solution", "BankError"], "ValueError"]],
            ["solution", "BankError", ["Exception"]],
        ],
    }
    bank_cls, funds_cls = classes.class_of(bank), classes.class_of(funds)
    assert issubclass(funds_cls, bank_cls) and issubclass(funds_cls, ValueError)
    assert classes.class_of(funds) is funds_cls
    assert funds_cls.__name__ == "InsufficientFunds"


@pytest.mark.parametrize(
    "name", ["StopIteration", "StopAsyncIteration", "GeneratorExit", "SystemExit", "KeyboardInterrupt", "BaseException"]
)
def test_control_flow_exceptions_never_cross_as_themselves(name: str) -> None:
    """PEP 479's way: a StopIteration (or an exit) from a call is an abort, not itself."""
    exc = _rebuild({"raised": name, "mro": [name, "BaseException", "object"], "message": ""})
    assert isinstance(exc, ControlFlowEscaped)
    assert not isinstance(exc, Exception)


def test_faults_escape_pytest_raises_exception() -> None:
    """A crash or a refusal must not pass for an expected error: faults are not Exceptions."""
    for fault in (
        proxy.CandidateDied,
        proxy.CandidateTimeout,
        proxy.NotPlainData,
        proxy.CandidateOOM,
        HandleRefused,
        ControlFlowEscaped,
    ):
        assert not issubclass(fault, Exception)


def _session() -> proxy.CandidateSession:
    session = object.__new__(proxy.CandidateSession)  # never asked: nothing here may reach the candidate
    session.handle_types = {}
    return session


def test_a_handle_has_exactly_its_types_protocols() -> None:
    session = _session()
    plain = make_handle(session, ["H", 1], 1, "Record", [], [])
    assert not callable(plain)
    assert not isinstance(plain, collections.abc.Iterable) and not isinstance(plain, collections.abc.Sized)
    assert type(plain).__name__ == "Record"
    assert plain != 1 and plain == plain  # identity needs no answer from the candidate
    with pytest.raises(TypeError):
        _ = plain < 1  # type: ignore[operator]  # Python's own answer: the type has no ordering
    full = make_handle(session, ["H", 2], 1, "Bag", [], ["m:__len__", "m:__iter__", "m:__call__", "n:__hash__"])
    assert callable(full) and isinstance(full, collections.abc.Sized) and isinstance(full, collections.abc.Iterable)
    with pytest.raises(TypeError, match="unhashable"):
        hash(full)  # the type's own answer, from Python


def test_a_handle_refuses_what_only_the_candidate_could_answer() -> None:
    session = _session()
    h = make_handle(session, ["H", 1], 1, "LRU", [], ["m:__eq__", "n:__hash__", "m:__lt__"])
    for compare in (lambda: h == 1, lambda: h != h, lambda: h < 2, lambda: sorted([h, h])):
        with pytest.raises(HandleRefused, match="cannot be compared"):
            compare()
    assert h in [h]  # identity, which Python checks before ==, needs no answer from the candidate
    cls = remote_class(Handle(session, ["N", ["solution", "LRU"]], None, "LRU", []), "LRU")
    assert not isinstance([1], cls) and not isinstance(3, cls)  # plain data is never a candidate object
    assert cls == cls and cls != int  # noqa: E721 - a class is itself alone: no candidate code runs
    assert cls not in (type, object)  # what Hypothesis' st.builds asks while reading a signature


def test_mutation_carry_back_never_asks_a_handle_for_equality() -> None:
    session = _session()
    a = Handle(session, ["H", 1], 1, "T", [])  # type: ignore[arg-type]
    same = Handle(session, ["H", 1], 1, "T", [])  # type: ignore[arg-type]
    other = Handle(session, ["H", 2], 1, "T", [])  # type: ignore[arg-type]
    values = [a, 1]
    proxy._sync_in_place(values, [same, 1])
    assert values[0] is a  # the same reference: left as it was
    proxy._sync_in_place(values, [other, 1])
    assert values[0] is other


class _Number:
    def __init__(self, v: float) -> None:
        self.v = v

    def __float__(self) -> float:
        return self.v

    def __floor__(self) -> int:
        return 0

    def __round__(self, n: int | None = None) -> int:
        return 0

    def __radd__(self, other: object) -> object:
        return NotImplemented


class _Seq(collections.abc.Sequence[int]):
    def __getitem__(self, i: Any) -> Any:
        raise IndexError(i)

    def __len__(self) -> int:
        return 0


class _Ne:
    def __ne__(self, other: object) -> bool:
        return False


class _Slotted:
    __slots__ = ("x",)


_SAMPLES: list[Any] = [
    _Number(1.5),
    _Seq(),
    _Ne(),
    _Slotted(),
    bytearray(b"x"),
    collections.OrderedDict(),
    collections.deque(),
    iter([1]),
    (i for i in range(1)),
    len,
    _Number.__init__,
    range(3).__iter__(),
    memoryview(b"x"),
]


@pytest.mark.parametrize("obj", _SAMPLES, ids=lambda o: type(o).__name__)
def test_a_handles_class_has_exactly_the_special_methods_of_the_type(obj: Any) -> None:
    """Generated from the type's description (as the candidate process makes it): every special
    name Python or a protocol check may look up on the type is there exactly when the real type
    has it, and every standard ABC answers as for the real object."""
    import numbers
    import os
    import typing

    from verifier.runner import candidate, handles, wire

    real = type(obj)
    description = candidate._protocols(real)
    cls = handles.handle_type(_session(), real.__name__, description)
    names = {n for k in real.__mro__ for n in vars(k) if n.startswith("__") and n.endswith("__")}
    names |= {
        "__trunc__", "__floor__", "__ceil__", "__bytes__", "__fspath__", "__index__", "__length_hint__",
        "__contains__", "__reversed__", "__missing__", "__aiter__", "__anext__", "__await__", "__aenter__",
        "__aexit__", "__enter__", "__exit__", "__get__", "__set__", "__delete__", "__buffer__", "__copy__",
        "__deepcopy__", "__iter__", "__next__", "__len__", "__bool__", "__call__", "__complex__", "__int__",
    }  # fmt: skip
    for name in sorted(names - handles._OWN):
        assert hasattr(cls, name) == hasattr(real, name), name
        if hasattr(real, name) and getattr(real, name) is None:
            assert getattr(cls, name) is None, name
    h = make_handle(_session(), ["H", 1], 1, real.__name__, [], description)
    abcs = [handles._abc(n) for n in wire.ABCS]
    protocols = [typing.SupportsIndex, typing.SupportsFloat, typing.SupportsRound, typing.SupportsAbs, os.PathLike]
    for abc in [*abcs, *protocols, numbers.Number]:
        assert isinstance(h, abc) == isinstance(obj, abc), abc  # type: ignore[arg-type]
