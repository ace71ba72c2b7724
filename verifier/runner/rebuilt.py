"""Trusted side: the candidate's exceptions and warnings as the tests see them.

A candidate exception is rebuilt on the trusted side from plain data (never unpickled): its
class is the builtin class it derives from, the standard library's class when the trusted side
already has that module, or a stand-in subclass of those made here for the candidate's own
class (one per class and run, so ``from solution import InsufficientFunds`` and the exception
a call raises are the same class, and ``pytest.raises(InsufficientFunds)``, ``pytest.raises
(ValueError)`` and ``except BankError`` work as with the real one). Its ``args`` (exactly),
``str()``, plain-data attributes, PEP 678 ``__notes__``, its chain (``__cause__``,
``__context__``, ``__suppress_context__``) and an exception group's members come along; args or
notes that cannot cross, or a chain longer than `wire.MAX_CHAIN`, make it an abort.

What steers control flow never crosses as itself: ``StopIteration`` (outside ``next()``),
``StopAsyncIteration``, ``GeneratorExit``, ``SystemExit``, ``KeyboardInterrupt`` or any other
class that is not an ``Exception`` end the test as `ControlFlowEscaped`, an abort (as PEP 479
turns a generator's ``StopIteration`` into an error), so a cache that "raises StopIteration"
cannot end a test's ``all(map(...))`` early.

Warnings a call emitted are issued again in the test with `warnings.warn_explicit`, under the
tests' own filters, so ``pytest.warns``, ``recwarn`` and ``-W error`` see them.
"""

from __future__ import annotations

import builtins
import sys
import warnings
from typing import Any

from . import wire
from .faults import ControlFlowEscaped, NotPlainData
from .protocol import clean

#: pytest leaves this module's frames out of a failure's text (it reads `__tracebackhide__` from
#: a frame's globals too): they are the verifier's, not the test's or the candidate's doing.
__tracebackhide__ = True

MAX_MESSAGE = 4000


_UNSET = object()

#: What of a candidate exception crosses exactly, or the exception is an abort.
_KEPT = ("args", "__notes__", "__cause__", "__context__")


class CandidateRaised(Exception):
    """A linked exception (a cause or context) of a class that may not be rebuilt as itself."""


def _stand_in_str(self: BaseException) -> str:
    return str(getattr(self, "verifier_message", ""))


def _name(text: Any, fallback: str) -> str:
    text = str(text)[:200]
    return text if all(part.isidentifier() for part in text.split(".")) else fallback


def _trusted_class(module: str, qualname: str) -> type[BaseException] | None:
    """The standard library's own class, when the trusted side has already imported its module."""
    if module.split(".")[0] not in sys.stdlib_module_names or module not in sys.modules:
        return None
    obj: Any = sys.modules[module]
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return obj if isinstance(obj, type) and issubclass(obj, BaseException) else None


#: The builtin classes of `wire.CONTROL_FLOW`: a class built here with one among its bases
#: (a candidate's `class E(ValueError, StopIteration)`) would steer the test as that one does.
_STEERING: tuple[type[BaseException], ...] = tuple(getattr(builtins, name) for name in sorted(wire.CONTROL_FLOW))


def steers(cls: type[BaseException]) -> bool:
    """Whether raising `cls` in a test would steer its control flow (end an iteration, the run)."""
    return issubclass(cls, _STEERING) or not issubclass(cls, Exception)


def builtin_base(payload: dict[str, Any]) -> type[BaseException]:
    """The nearest builtin exception class the payload's MRO names (a trusted class)."""
    mro = payload.get("mro")
    for name in mro if isinstance(mro, list) else []:
        cls = getattr(builtins, str(name), None)
        if isinstance(cls, type) and issubclass(cls, BaseException):
            return cls
    return BaseException


class CandidateClasses:
    """The trusted side's classes for the candidate's exception and warning classes of one run."""

    def __init__(self) -> None:
        self.classes: dict[tuple[str, str], type[BaseException]] = {}
        #: `warnings.warn_explicit`'s registry for re-issued warnings ("once", "module" filters).
        self.warning_registry: dict[Any, Any] = {}

    def class_of(self, payload: dict[str, Any]) -> type[BaseException]:
        """The class a payload describes: the nearest builtin one, or the one built here from
        the payload's classes and their direct bases (multiple inheritance included)."""
        chain = payload.get("classes")
        #: (module, qualname) -> (direct bases, the class's own spelling of its name)
        entries: dict[tuple[str, str], tuple[list[Any], str]] = {}
        for entry in chain[: wire.MAX_CLASSES] if isinstance(chain, list) else []:
            if isinstance(entry, list) and len(entry) == 3 and isinstance(entry[2], list):
                key = (_name(entry[0], "candidate"), _name(entry[1], "CandidateError"))
                entries.setdefault(key, (entry[2], clean(str(entry[1]), 200)))
        fallback = builtin_base(payload)
        if not entries:
            return fallback
        cls = self._class(next(iter(entries)), entries, fallback, 0)
        return cls if issubclass(cls, fallback) else fallback

    def _class(
        self,
        key: tuple[str, str],
        entries: dict[tuple[str, str], tuple[list[Any], str]],
        fallback: type[BaseException],
        depth: int,
    ) -> type[BaseException]:
        module, qualname = key
        real = _trusted_class(module, qualname)
        if real is not None:
            return real
        known = self.classes.get(key)
        if known is not None:
            return known
        bases: list[type[BaseException]] = []
        refs, spelling = entries.get(key, ([], qualname))
        for ref in refs[:8]:
            base: Any = None
            if isinstance(ref, str):
                base = getattr(builtins, ref, None)
            elif isinstance(ref, list) and len(ref) == 2 and depth < wire.MAX_CLASSES:
                ref_key = (_name(ref[0], "candidate"), _name(ref[1], "CandidateError"))
                if ref_key in entries:
                    base = self._class(ref_key, entries, fallback, depth + 1)
            if isinstance(base, type) and issubclass(base, BaseException) and base not in bases:
                bases.append(base)
        if not bases:
            bases = [fallback]
        # The class's own spelling stays in __qualname__, as data: pytest shows it only in the
        # failure's text (the untrusted detail); trusted summaries name the builtin class.
        namespace = {"__module__": module, "__qualname__": spelling, "__str__": _stand_in_str}
        name = qualname.rpartition(".")[2]
        cls: type[BaseException] | None = None
        for tried in (tuple(bases), (bases[0],)):
            try:
                cls = type(name, tried, namespace)
                break
            except TypeError:  # bases that cannot be combined (layouts, MRO)
                continue
        if cls is None:
            return bases[0]
        self.classes[key] = cls
        return cls

    def rebuild(self, payload: dict[str, Any], resolve: wire.Resolve) -> BaseException:
        """The exception the test sees for the candidate's raised one, or the abort for one that
        would steer the test's control flow."""
        base = builtin_base(payload)
        raised = str(payload.get("raised", "Exception"))[:200]
        if base.__name__ in wire.CONTROL_FLOW or steers(base) or steers(self.class_of(payload)):
            named = next((c.__name__ for c in _STEERING if issubclass(self.class_of(payload), c)), base.__name__)
            return ControlFlowEscaped(
                f"the candidate raised {named}, which cannot cross into the tests as itself "
                "(it would end the test's iteration or its run)",
                f"{raised}: {str(payload.get('message', ''))[:MAX_MESSAGE]}",
            )
        return self._instance(payload, resolve, 0)

    def value(self, payload: dict[str, Any], resolve: wire.Resolve) -> BaseException:
        """An exception the candidate returned (not raised): rebuilt the same way, as a value."""
        return self._instance(payload, resolve, 0)

    def _instance(self, payload: dict[str, Any], resolve: wire.Resolve, depth: int) -> BaseException:
        cls = self.class_of(payload)
        message = str(payload.get("message", ""))[:MAX_MESSAGE]
        raised = str(payload.get("raised", "Exception"))[:200]
        lost = payload.get("lost")
        if lost is not None:
            # What a test reads of an exception (its args, notes and chain) is the real one's or
            # nothing: never a stand-in that answers differently.
            what = str(lost)[:40] if lost in _KEPT else "fields"
            raise NotPlainData(
                f"the candidate's exception has {what} that cannot cross (not plain data, too large, or a chain "
                f"longer than {wire.MAX_CHAIN})",
                f"{raised}: {message}",
            )
        if steers(cls) or builtin_base(payload).__name__ in wire.CONTROL_FLOW:
            cls = CandidateRaised
            message = f"{raised}: {message}"
        # No args said (what a candidate process that answers at all always sends): its message.
        values = wire.decode(payload["args"], resolve=resolve) if "args" in payload else [message]
        if type(values) is not list:
            raise wire.BadWireValue("malformed exception arguments")
        exc = _construct(cls, values, message)
        if cls is not CandidateRaised and (
            len(exc.args) != len(values) or any(a is not b for a, b in zip(exc.args, values, strict=False))
        ):
            exc.args = tuple(values)  # as the candidate's was, whatever its class's constructor makes of them
        members = payload.get("members")
        for key, value in members.items() if isinstance(members, dict) else ():
            # Builtin exceptions' own fields outside args (OSError.filename, ImportError.name).
            if isinstance(key, str) and not key.startswith("_") and key not in ("args", "exceptions", "message"):
                decoded = wire.decode(value, resolve=resolve)
                try:
                    if getattr(exc, key, _UNSET) is not decoded:  # OSError's str() tells an unset field from None
                        setattr(exc, key, decoded)
                except (AttributeError, TypeError) as err:
                    raise NotPlainData(
                        f"the candidate's exception has a field {key[:40]!r} that cannot be rebuilt",
                        f"{raised}: {message}",
                    ) from err
        if "notes" in payload:
            notes = wire.decode(payload["notes"], resolve=resolve)
            exc.__notes__ = notes  # type: ignore[attr-defined]
        if type(exc).__str__ is _stand_in_str or cls is not type(exc):
            exc.verifier_message = message  # type: ignore[attr-defined]
        attrs = payload.get("attrs")
        for key, value in attrs.items() if isinstance(attrs, dict) else ():
            if isinstance(key, str) and not key.startswith("__") and key != "args":
                try:
                    setattr(exc, key, wire.decode(value, resolve=resolve))
                except Exception:  # noqa: BLE001 - a read-only attribute, a malformed value: left out
                    continue
        # The trusted name of what the test sees: the nearest builtin class of the rebuilt one.
        seen = next((c for c in type(exc).__mro__ if c.__module__ == "builtins"), BaseException)
        exc.verifier_candidate_raised = seen.__name__  # type: ignore[attr-defined]
        for key in ("cause", "context"):
            linked = payload.get(key)
            if key == "context" and payload.get("context_is_cause") is True:
                exc.__context__ = exc.__cause__
            elif isinstance(linked, dict) and depth < wire.MAX_CHAIN:
                setattr(exc, f"__{key}__", self._instance(linked, resolve, depth + 1))
            elif linked is not None:
                raise wire.BadWireValue("malformed exception chain")
        exc.__suppress_context__ = payload.get("suppress_context") is True
        return exc

    def warn(self, payload: dict[str, Any], resolve: wire.Resolve) -> None:
        """Issue a warning the candidate emitted again, here, under the tests' filters."""
        self.issue(self.warning(payload, resolve))

    def issue(self, made: tuple[Warning, str, int]) -> None:
        """Issue a warning `warning` made, under the tests' filters as they are now."""
        instance, filename, lineno = made
        warnings.warn_explicit(instance, type(instance), filename, lineno, registry=self.warning_registry)

    def warning(self, payload: dict[str, Any], resolve: wire.Resolve) -> tuple[Warning, str, int]:
        """A warning the candidate emitted, rebuilt here (its references resolved now), with the
        file name and line it names."""
        category = self.class_of(payload)
        if steers(category):  # a warning that an error filter would raise as StopIteration
            raise ControlFlowEscaped(
                "the candidate warned with a class that is also a control-flow exception, which cannot cross "
                "into the tests as itself",
                str(payload.get("message", ""))[:MAX_MESSAGE],
            )
        if not issubclass(category, Warning):
            category = UserWarning
        message = str(payload.get("message", ""))[:MAX_MESSAGE]
        try:
            values = wire.decode(payload["args"], resolve=resolve) if "args" in payload else None
        except (wire.BadWireValue, ValueError, TypeError, RecursionError):
            values = None
        instance = _construct(category, values if type(values) is list else None, message)
        if not isinstance(instance, Warning):
            instance = UserWarning(message)
        if type(instance).__str__ is _stand_in_str:
            instance.verifier_message = message  # type: ignore[attr-defined]
        filename = str(payload.get("filename", "<candidate>"))[:500]
        lineno = payload.get("lineno")
        return instance, filename, lineno if type(lineno) is int else 0


def _construct(cls: type[BaseException], values: list[Any] | None, message: str) -> BaseException:
    """`cls(*values)` as the candidate built it; else `cls(message)`; else the nearest ancestor
    that can be built from the message (UnicodeDecodeError -> UnicodeError)."""
    if values is not None:
        try:
            return cls(*values)
        except Exception:  # noqa: BLE001 - a constructor that refuses them
            pass
    for candidate in cls.__mro__:
        if isinstance(candidate, type) and issubclass(candidate, BaseException):
            try:
                return candidate(message)
            except Exception:  # noqa: BLE001 - a constructor with other required arguments
                continue
    return CandidateRaised(message)
