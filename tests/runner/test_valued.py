"""Objects that are also builtin values (issue 32, `verifier.runner.valued`): the class the tests
get is a subclass of the same builtin, holding exactly the value, with the builtin's own special
methods wherever the candidate's class has them too, and the candidate's (forwarded, or refused
for comparisons) wherever its class overrides them. Unit tests of the classes made from a
description; `tests/adversarial/standins/values_*` run real candidates."""

from __future__ import annotations

import collections
import enum
import pickle
import weakref
from typing import Any

import pytest

from verifier.runner import candidate, proxy, wire
from verifier.runner.faults import HandleRefused
from verifier.runner.handles import Handle, handle_of, make_handle
from verifier.runner.valued import BASES, make_valued


def _session() -> proxy.CandidateSession:
    session = object.__new__(proxy.CandidateSession)  # never asked: nothing here may reach the candidate
    session.handle_types = {}
    session.valued_types = {}
    return session


Point = collections.namedtuple("Point", "x y")


class Color(enum.IntEnum):
    RED = 1


class Mode(enum.StrEnum):
    READ = "r"


class Loud(str):
    def __str__(self) -> str:
        return "LOUD"

    def __len__(self) -> int:
        return 99

    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = str.__hash__


class Meters(float):
    pass


class Tags(frozenset[str]):
    pass


class Blob(bytes):
    pass


_SAMPLES: list[Any] = [Point(1, 2), Color.RED, Mode.READ, Loud("ab"), Meters(2.5), Tags({"a"}), Blob(b"xy")]


def _made(obj: Any) -> tuple[Any, Handle]:
    real = type(obj)
    base = candidate._value_base(obj)
    assert base is not None and base.__name__ in BASES
    session = _session()
    inner = make_handle(session, ["H", 1], 1, real.__name__, [], [])
    value = candidate._base_value(obj, base)
    assert type(value) is base and value == base.__new__(base, value)
    return make_valued(session, inner, base.__name__, value, real.__name__, candidate._protocols(real, base)), inner


@pytest.mark.parametrize("obj", _SAMPLES, ids=lambda o: type(o).__name__)
def test_the_builtins_own_methods_wherever_the_class_does_not_override_them(obj: Any) -> None:
    made, inner = _made(obj)
    real = type(obj)
    base = candidate._value_base(obj)
    assert base is not None and isinstance(made, base) and type(made).__name__ == real.__name__
    assert handle_of(made) is inner  # passed back to the candidate, it is the object itself
    names = {n for k in real.__mro__ for n in vars(k) if n.startswith("__") and n.endswith("__")}
    own = {"__getattribute__", "__setattr__", "__delattr__", "__dir__", "__sizeof__", "__getstate__",
           "__reduce__", "__reduce_ex__", "__new__", "__init__", "__init_subclass__", "__subclasshook__",
           "__class_getitem__", "__class__", "__doc__", "__module__", "__dict__", "__weakref__", "__slots__",
           "__match_args__", "__getnewargs__", "__annotations__", "__orig_bases__", "__parameters__"}  # fmt: skip
    for name in sorted(names - own):
        overridden = candidate._lookup(real, name) is not candidate._lookup(base, name)
        mine = candidate._lookup(type(made), name)
        if not overridden:
            assert mine is candidate._lookup(base, name), name  # the builtin's, on the exact value
        else:
            assert mine is not candidate._lookup(base, name), name  # the candidate's, forwarded or refused
    try:
        weakref.ref(obj)
        weak = True
    except TypeError:
        weak = False
    try:
        weakref.ref(made)
        assert weak, "a weak reference the real object cannot have"
    except TypeError:
        assert not weak, "no weak reference where the real object has one"


def test_what_c_code_reads_is_the_value() -> None:
    p, _ = _made(Point(1, 2))
    assert p == (1, 2) and p + (3,) == (1, 2, 3) and "%s-%s" % p == "1-2" and hash(p) == hash((1, 2))  # noqa: RUF005, UP031 - the C paths
    c, _ = _made(Color.RED)
    assert c == 1 and c + 1 == 2 and [0, 5][c] == 5
    s, _ = _made(Mode.READ)
    assert "x" + s == "xr" and ",".join([s, s]) == "r,r"


def test_an_overridden_comparison_is_refused_and_the_rest_forwarded() -> None:
    loud, _ = _made(Loud("ab"))
    with pytest.raises(HandleRefused):
        _ = loud == "zz"
    assert type(loud).__len__ is not str.__len__ and type(loud).__str__ is not str.__str__


def test_pickle_and_construction_are_refused() -> None:
    p, _ = _made(Point(1, 2))
    with pytest.raises(HandleRefused):
        pickle.dumps(p)
    with pytest.raises(HandleRefused):
        type(p)((3, 4))


@pytest.mark.parametrize(
    ("base", "value"),
    [("list", [1]), ("str", 3), ("tuple", [1, 2]), (None, "a"), ("bool", True), ("int", True), ("bytes", "ab")],
)
def test_a_malformed_description_is_refused(base: Any, value: Any) -> None:
    session = _session()
    inner = make_handle(session, ["H", 1], 1, "T", [], [])
    with pytest.raises(wire.BadWireValue, match="malformed"):
        make_valued(session, inner, base, value, "T", [])


def test_a_value_holding_itself_is_refused_where_it_is_made() -> None:
    class Cell(tuple[Any, ...]):
        pass

    box: list[Any] = []
    cell = Cell((box,))
    box.append(cell)
    objects = candidate.Objects({})
    with pytest.raises(wire.BadWireValue, match="cycle"):
        objects.refer(cell)


def test_a_candidate_class_iterates_only_when_its_metaclass_does() -> None:
    from verifier.runner.handles import remote_class

    session = _session()
    plain = remote_class(Handle(session, ["N", ["solution", "P"]], None, "P", []), "P", [])
    with pytest.raises(TypeError):
        iter(plain)  # type: ignore[call-overload]  # Python's own answer: a plain class is not iterable
    objects = candidate.Objects({})
    described = candidate._class_protocols(Color, objects)
    assert {"meta:m:__iter__", "meta:m:__len__", "meta:m:__getitem__", "meta:m:__contains__"} <= set(described)
    assert not [d for d in candidate._class_protocols(Point, objects) if d.startswith("meta:")]
    enum_cls = remote_class(Handle(session, ["N", ["solution", "Color"]], None, "Color", []), "Color", described)
    for name in ("__iter__", "__len__", "__getitem__", "__contains__", "__reversed__"):
        assert name in vars(type(enum_cls)), name
