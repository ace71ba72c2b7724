"""Plus inputs for one problem, made from the types and shapes of its own base inputs
(`bench humaneval --plus`; `verifier.bench.plus` runs this in a child process and caches it).

EvalPlus's type-aware mutation is the anchor: seeds are the base inputs, each new input is a seed
changed in one to five type-directed steps (an int moved by a little or replaced by another int
seen at that place; a string with a character inserted, dropped, replaced or a piece repeated or
dropped; a list with an element dropped, repeated, changed, inserted or two swapped; a dict with an
item dropped, added or changed), and only inputs on which the canonical solution is defined are
kept. Every choice is drawn from a `random.Random` seeded by the base inputs (`Choices`: the
same problem gives the same inputs, on any machine with the same Python), with a range's ends
drawn more often than a uniform draw would, and since we have no hand-written contracts (EvalPlus's
preconditions), each place in an input keeps the shape every base input has there (`Shape`):
its type, the range of its numbers, the characters of its strings, a length that is never zero
where no base input's is, sorted where every base input is sorted, balanced brackets where every
base input's are. Values stay Python literals (`repr` / `ast.literal_eval` round trip), so
tuples, dict keys and floats reach the sandbox as they were made.

Pure functions only; the canonical solution is called through `judge`, which
`verifier.bench.plus_worker` bounds in time and memory. (Until GENERATOR_VERSION 2 the choices
were Hypothesis draws under its engine: three quarters of the generator's time went to the
engine's own bookkeeping and mutation of earlier examples, none to what made an input.)
"""

from __future__ import annotations

import ast
import copy
import itertools
import math
import random
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

#: One input: the positional arguments of one call.
Args = list[Any]
#: Where a value sits in an input: argument index, then "*" (a list's element), an index (a
#: tuple's), "k"/"v" (a dict's keys and values).
Path = tuple[int | str, ...]
#: The numbers a base input's values are mutated as.
Number = TypeVar("Number", int, float)
T = TypeVar("T")

#: Longest `repr` of an input kept (it must fit the evidence's falsifying example).
MAX_INPUT_CHARS = 600
#: Steps of mutation applied to a seed (EvalPlus: one to five).
MAX_STEPS = 5
#: A list this long is not made longer (strings are bounded by `MAX_INPUT_CHARS`).
MAX_LENGTH = 40
_BRACKETS = {")": "(", "]": "[", "}": "{"}


@dataclass
class Shape:
    """What every base input has at one place: the types seen, the range of its numbers, the
    characters and lengths of its strings and sequences, and whether it is always sorted and
    (strings) always has balanced brackets."""

    types: set[type] = field(default_factory=set)
    low: float | None = None
    high: float | None = None
    chars: set[str] = field(default_factory=set)
    min_len: int | None = None
    max_len: int | None = None
    sorted: bool = True
    ordered_seen: int = 0
    balanced: bool = True
    values: list[Any] = field(default_factory=list)

    def see(self, value: Any) -> None:
        self.types.add(type(value))
        if len(self.values) < 200 and value not in self.values:
            self.values.append(value)
        if isinstance(value, int | float) and not isinstance(value, bool):
            self.low = value if self.low is None else min(self.low, value)
            self.high = value if self.high is None else max(self.high, value)
        if isinstance(value, str | list | tuple | dict):
            n = len(value)
            self.min_len = n if self.min_len is None else min(self.min_len, n)
            self.max_len = n if self.max_len is None else max(self.max_len, n)
        if isinstance(value, str):
            self.chars.update(value)
            self.balanced = self.balanced and _balanced(value)
        if isinstance(value, list | tuple) and len(value) >= 2:
            self.ordered_seen += 1
            self.sorted = self.sorted and _is_sorted(value)

    @property
    def sign_floor(self) -> float | None:
        """The least number allowed: 1 if every base number is positive, 0 if none is negative."""
        if self.low is None:
            return None
        return 1 if self.low >= 1 else 0 if self.low >= 0 else None

    def number_range(self, kind: type) -> tuple[float, float]:
        """The numbers of `kind` made here: the base inputs' range (one value seen: around it,
        never across its sign)."""
        low, high = self.low or 0, self.high or 0
        if kind is int:
            low, high = math.floor(low), math.ceil(high)
        if low == high:
            width = 2 if kind is int else 1.0
            low, high = low - width, high + width
            floor = self.sign_floor
            low = max(low, floor) if floor is not None else low
        return low, high

    @property
    def nonempty(self) -> bool:
        """Every base value here has a length, and none is empty."""
        return self.min_len is not None and self.min_len >= 1

    @property
    def keeps_order(self) -> bool:
        """Every base list or tuple here is sorted, and at least two could have been unsorted."""
        return self.sorted and self.ordered_seen >= 2


def _balanced(text: str) -> bool:
    stack: list[str] = []
    for ch in text:
        if ch in "([{":
            stack.append(ch)
        elif ch in _BRACKETS and (not stack or stack.pop() != _BRACKETS[ch]):
            return False
    return not stack


def _is_sorted(value: Sequence[Any]) -> bool:
    try:
        return all(a <= b for a, b in itertools.pairwise(value))
    except TypeError:
        return False


def shapes(bases: Iterable[Args]) -> dict[Path, Shape]:
    """The shape of every place of the base inputs."""
    found: dict[Path, Shape] = {}

    def walk(value: Any, path: Path) -> None:
        found.setdefault(path, Shape()).see(value)
        if isinstance(value, list):
            for item in value:
                walk(item, (*path, "*"))
        elif isinstance(value, tuple):
            for i, item in enumerate(value):
                walk(item, (*path, i))
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(key, (*path, "k"))
                walk(item, (*path, "v"))

    for args in bases:
        for i, arg in enumerate(args):
            walk(arg, (i,))
    return found


def equal_lengths(bases: Sequence[Args]) -> list[tuple[int, int]]:
    """Pairs of arguments that have the same length in every base input (two strings or lists
    compared position by position, like string_xor's): a shape of the input as a whole."""
    sized = [b for b in bases if b]
    if len(sized) < 2:
        return []
    arity = min(len(b) for b in sized)
    pairs = []
    for i in range(arity):
        for j in range(i + 1, arity):
            if all(
                isinstance(b[i], str | list | tuple) and isinstance(b[j], str | list | tuple) and len(b[i]) == len(b[j])
                for b in sized
            ):
                pairs.append((i, j))
    return pairs


def literal(value: Any) -> bool:
    """Whether `value` survives `repr` and `ast.literal_eval` unchanged, types included."""
    try:
        back = ast.literal_eval(repr(value))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return False
    return _same_literal(back, value)


#: Longest canonical answer kept as text in a plus suite (longer ones are computed there).
MAX_EXPECTED_CHARS = 2_000


def plain_answer(value: Any) -> bool:
    """Whether a canonical answer can ship in the suite as text (`plus_expected.txt`) instead of
    being computed there: it survives `repr` and `ast.literal_eval` unchanged, types included
    (`literal`), is short, and holds no float anywhere (a float from the math library may differ
    in its last bit between the host and the sandbox; those answers are computed where they are
    compared, as before)."""
    try:
        return len(repr(value)) <= MAX_EXPECTED_CHARS and not _holds_float(value) and literal(value)
    except Exception:  # noqa: BLE001 - an answer that cannot be shown is computed in the sandbox
        return False


def _holds_float(value: Any) -> bool:
    if isinstance(value, float | complex):
        return True
    if isinstance(value, list | tuple | set | frozenset):
        return any(_holds_float(v) for v in value)
    if isinstance(value, dict):
        return any(_holds_float(k) or _holds_float(v) for k, v in value.items())
    return False


def _same_literal(a: Any, b: Any) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same_literal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same_literal(a[k], b[k]) for k in a)
    if isinstance(a, float):
        return math.isfinite(a) and a == b
    return bool(a == b)


def fits(args: Args, shape_of: dict[Path, Shape], equal: Sequence[tuple[int, int]] = ()) -> bool:
    """Whether an input keeps the shape of the base inputs at every place (what the mutation
    steps do not ensure as they go: order, brackets, lengths, numbers within the range), and
    the `equal` pairs of arguments keep their lengths equal."""
    if any(i >= len(args) or j >= len(args) or len(args[i]) != len(args[j]) for i, j in equal):
        return False

    def ok(value: Any, path: Path) -> bool:
        shape = shape_of.get(path)
        if shape is None or type(value) not in shape.types:
            return False
        if isinstance(value, int | float) and not isinstance(value, bool) and shape.low is not None:
            low, high = shape.number_range(type(value))
            if not low <= value <= high:
                return False
        if isinstance(value, str | list | tuple | dict) and shape.nonempty and not value:
            return False
        if isinstance(value, str) and (not set(value) <= shape.chars or (shape.balanced and not _balanced(value))):
            return False
        if isinstance(value, list | tuple) and shape.keeps_order and not _is_sorted(value):
            return False
        if isinstance(value, list):
            return all(ok(v, (*path, "*")) for v in value)
        if isinstance(value, tuple):
            return all(ok(v, (*path, i)) for i, v in enumerate(value))
        if isinstance(value, dict):
            return all(ok(k, (*path, "k")) and ok(v, (*path, "v")) for k, v in value.items())
        return True

    return all(ok(arg, (i,)) for i, arg in enumerate(args))


def conform(args: Args, shape_of: dict[Path, Shape]) -> Args:
    """`args` with every list or tuple sorted where every base input's is (a mutation that
    moved one element keeps the rest of its change)."""

    def fix(value: Any, path: Path) -> Any:
        if isinstance(value, list):
            items = [fix(v, (*path, "*")) for v in value]
        elif isinstance(value, tuple):
            items = [fix(v, (*path, i)) for i, v in enumerate(value)]
        else:
            return value
        shape = shape_of.get(path)
        if shape is not None and shape.keeps_order:
            try:
                items = sorted(items)
            except TypeError:
                pass
        return items if isinstance(value, list) else tuple(items)

    return [fix(arg, (i,)) for i, arg in enumerate(args)]


# -- the mutation steps --------------------------------------------------------------------


class Choices:
    """The mutation's choices: a `random.Random` seeded by `seed` (the same seed, the same choices),
    which draws a range's two ends more often than a uniform draw would (`EDGE` of the draws, half
    each): an input at the edge of what the check used is where an off-by-one shows."""

    EDGE = 0.1

    def __init__(self, seed: str) -> None:
        self.random = random.Random(seed)

    def boolean(self) -> bool:
        return self.random.random() < 0.5

    def integer(self, low: int, high: int) -> int:
        """An int in [low, high]: an end (`EDGE`), else uniform half the time, and the other half
        near the range's simplest value (0, or the end nearest it), as Hypothesis draws: so one
        step, a position near the start, a small move come more often than their share, and an
        input stays near the base input it came from."""
        if low >= high:
            return low
        edge = self.random.random()
        if edge < self.EDGE:
            return low if edge < self.EDGE / 2 else high
        if self.random.random() < 0.5:
            return self.random.randint(low, high)
        near = min(max(0, low), high)
        span, small = high - low, self.random.random() ** 3
        # An int too large for a float (a 400-digit literal is one) is scaled in int arithmetic.
        offset = int(span * small) if span < 2**53 else span * int(small * 2**53) // 2**53
        if near == low or (near != high and self.random.random() < 0.5):
            return min(high, near + offset)
        return max(low, near - offset)

    def floating(self, low: float, high: float) -> float:
        if not low < high:
            return low
        edge = self.random.random()
        if edge < self.EDGE:
            return low if edge < self.EDGE / 2 else high
        return self.random.uniform(low, high)

    def pick(self, values: Sequence[T]) -> T:
        return values[self.random.randrange(len(values))]


def _mutate(draw: Choices, value: Any, path: Path, shape_of: dict[Path, Shape]) -> Any:
    """One type-directed step at `path` (the value keeps its type)."""
    shape = shape_of.get(path, Shape())
    if isinstance(value, bool):
        return draw.boolean()
    if isinstance(value, int):
        return _mutate_int(draw, value, shape)
    if isinstance(value, float):
        return _mutate_float(draw, value, shape)
    if isinstance(value, str):
        return _mutate_str(draw, value, shape)
    if isinstance(value, list):
        return _mutate_list(draw, value, path, shape_of)
    if isinstance(value, tuple):  # a fixed arity: change one member
        if not value:
            return value
        i = draw.integer(0, len(value) - 1)
        return (*value[:i], _mutate(draw, value[i], (*path, i), shape_of), *value[i + 1 :])
    if isinstance(value, dict):
        return _mutate_dict(draw, value, path, shape_of)
    return value


def _number_way(
    draw: Choices, shape: Shape, kind: type[Number], ways: int
) -> tuple[Number, Number, int, Number | None]:
    """A number mutation's start: the range of `kind` seen at this place (low, high), which of the
    mutations 0 to `ways` to make, and for mutation 0 a value of `kind` seen here in a base input
    (an EvalPlus "ingredient"), or None when none was seen (the caller then makes another)."""
    low, high = (kind(x) for x in shape.number_range(kind))
    how = draw.integer(0, ways)
    same = [v for v in shape.values if type(v) is kind] if how == 0 else []
    return low, high, how, kind(draw.pick(same)) if same else None


def _mutate_int(draw: Choices, value: int, shape: Shape) -> int:
    low, high, how, seen = _number_way(draw, shape, int, 2)
    if seen is not None:
        return seen
    if how == 1:
        return min(high, max(low, value + draw.integer(-2, 2)))
    return draw.integer(low, high)


def _mutate_float(draw: Choices, value: float, shape: Shape) -> float:
    low, high, how, seen = _number_way(draw, shape, float, 3)
    if seen is not None:
        return seen
    if how == 1:
        moved = value + draw.floating(-1.0, 1.0)
    elif how == 2:  # a round number: halves and tenths are where rounding rules differ
        moved = float(round(draw.floating(low, high), draw.integer(0, 2)))
    else:
        moved = draw.floating(low, high)
    return min(high, max(low, moved))


def _mutate_str(draw: Choices, value: str, shape: Shape) -> str:
    alphabet = sorted(shape.chars) or list("abc")
    pieces = re.findall(r"\s+|\S+", value)
    numbers = [m for m in re.finditer(r"\d+", value) if len(m.group()) <= 18]  # a number, not a digit string
    how = draw.integer(0, (7 if numbers else 6) if value else 1)
    if how == 7:  # a number in the text moved by up to two, its width kept ("04" -> "02")
        number = draw.pick(numbers)
        moved = max(0, int(number.group()) + draw.integer(-2, 2))
        text = str(moved).zfill(len(number.group()) if number.group().startswith("0") else 1)
        return value[: number.start()] + text + value[number.end() :]
    if how == 0:  # a string seen here in a base input, or a word of one
        words = sorted({w for s in shape.values if isinstance(s, str) for w in [s, *s.split()]})
        return draw.pick(words) if words else value
    if how == 1:  # insert a character
        at = draw.integer(0, len(value))
        return value[:at] + draw.pick(alphabet) + value[at:]
    at = draw.integer(0, len(value) - 1)
    if how == 2:  # drop a character
        return value[:at] + value[at + 1 :]
    if how == 3:  # replace a character
        return value[:at] + draw.pick(alphabet) + value[at + 1 :]
    if how == 4:  # repeat a piece (a character up to the rest)
        end = draw.integer(at + 1, len(value))
        return value[:end] + value[at:end] + value[end:]
    i = draw.integer(0, len(pieces) - 1)
    if how == 5:  # drop a word or a run of spaces
        return "".join(pieces[:i] + pieces[i + 1 :])
    return "".join(pieces[: i + 1] + pieces[i:])  # repeat one


def _mutate_list(draw: Choices, value: list[Any], path: Path, shape_of: dict[Path, Shape]) -> list[Any]:
    inner = (*path, "*")
    seen_items = shape_of.get(inner, Shape()).values
    if not value:
        if not seen_items:
            return value
        return [draw.pick(seen_items) for _ in range(draw.integer(1, 4))]
    out = list(value)
    i = draw.integer(0, len(out) - 1)
    how = draw.pick((0, 3, 4) if len(out) >= MAX_LENGTH else (0, 1, 2, 3, 4))
    if how == 0:
        out.pop(i)
    elif how == 1:
        out.insert(draw.integer(0, len(out)), _mutate(draw, copy.deepcopy(out[i]), inner, shape_of))
    elif how == 2:
        out.append(copy.deepcopy(out[i]))
    elif how == 3:
        j = draw.integer(0, len(out) - 1)
        out[i], out[j] = out[j], out[i]
    else:
        out[i] = _mutate(draw, out[i], inner, shape_of)
    return out


def _mutate_dict(draw: Choices, value: dict[Any, Any], path: Path, shape_of: dict[Path, Shape]) -> dict[Any, Any]:
    out = dict(value)
    keys = shape_of.get((*path, "k"), Shape()).values
    items = shape_of.get((*path, "v"), Shape()).values
    how = draw.integer(0, 2) if out else 1
    if how == 0:
        out.pop(draw.pick(list(out)))
    elif how == 1 and keys and items:
        key = _mutate(draw, draw.pick(keys), (*path, "k"), shape_of)
        out[key] = copy.deepcopy(draw.pick(items))
    elif out:
        key = draw.pick(list(out))
        out[key] = _mutate(draw, out[key], (*path, "v"), shape_of)
    return out


def mutated(draw: Choices, bases: Sequence[Args], shape_of: dict[Path, Shape]) -> Args:
    """A new input: a base input changed in one to `MAX_STEPS` steps, each at one argument."""
    args = copy.deepcopy(draw.pick(bases))
    for _ in range(draw.integer(1, MAX_STEPS)):
        if not args:
            break
        i = draw.integer(0, len(args) - 1)
        args[i] = _mutate(draw, args[i], (i,), shape_of)
    return args


# -- generation ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Generated:
    """The inputs kept (as `repr` text, in the order found) and what was tried."""

    inputs: list[str]
    tried: int
    rejected: dict[str, int]


def generate(
    bases: Sequence[Args], judge: Callable[[Args], str | None], *, count: int, tries: int | None = None
) -> Generated:
    """Up to `count` new inputs, none a base input, each one `judge` accepts (`judge` returns
    None, or why it refuses: the canonical solution raised, was slow, ...). Derandomized: the
    same bases and judge give the same inputs."""
    bases = [list(b) for b in bases if literal(list(b))]
    if not bases:
        return Generated([], 0, {"no base input": 1})
    shape_of = shapes(bases)
    equal = equal_lengths(bases)
    known = {repr(b) for b in bases}
    kept: list[str] = []
    rejected: dict[str, int] = {}
    tried = 0

    def refuse(why: str) -> None:
        rejected[why] = rejected.get(why, 0) + 1

    draw = Choices(f"plus-inputs:{bases!r}")
    while tried < (tries or 6 * count) and len(kept) < count:
        tried += 1
        args = conform(mutated(draw, bases, shape_of), shape_of)
        text = repr(args)
        if text in known:
            refuse("seen already")
            continue
        known.add(text)
        if len(text) > MAX_INPUT_CHARS or not literal(args):
            refuse("too long or not a literal")
            continue
        if not fits(args, shape_of, equal):
            refuse("not the base inputs' shape")
            continue
        why = judge(copy.deepcopy(args))
        if why is not None:
            refuse(why)
            continue
        kept.append(text)
    return Generated(kept, tried, rejected)
