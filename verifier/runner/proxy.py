"""Trusted side: `solution` as the tests see it. A module whose functions forward calls to a
separate candidate process as plain data.

When a call cannot end normally (the candidate died, hung, flooded its output, answered with
something that is not plain data, or the host was too busy to judge) the call raises a
`CallAborted`, a BaseException: a suite's ``pytest.raises(Exception)`` cannot swallow it, so a
crash never passes for an expected error. Exceptions the candidate *raised* come back as the
nearest builtin exception type, so ``pytest.raises(TypeError)`` works as usual.

Every `CallAborted` carries a `summary` written here from fixed templates and numbers (shown
to graders and terminals as a trusted line) and a `detail` that may hold candidate text.
"""

from __future__ import annotations

import functools
import json
import os
import select
import socket
import sys
import threading
import time
import types
from collections.abc import Callable, Iterator
from typing import Any

from . import scidata, wire
from .channels import OutputSink, control, oom_kills
from .clock import ChargedClock
from .faults import (
    CallAborted,
    CandidateDied,
    CandidateImportError,
    CandidateOOM,
    CandidateOutputLimit,
    CandidateTimeout,
    NotPlainData,
    OverloadAbort,
    SandboxFailure,
    StaleHandle,
)
from .handles import Handle, handle_of, make_handle, parts, remote_class
from .in_place import has_mutable as _has_mutable
from .in_place import sync_in_place as _sync_in_place
from .protocol import OVERLOAD_FACTOR
from .rebuilt import CandidateClasses, CandidateRaised, builtin_base
from .valued import make_valued
from .wire import ARGS_DEPTH

#: pytest leaves this module's frames out of a failure's text (it reads `__tracebackhide__` from
#: a frame's globals too): they are the verifier's, not the test's or the candidate's doing.
__tracebackhide__ = True

#: After this many call timeouts in one run, further calls fail at once: the verdict is a
#: timeout either way, and waiting out every remaining test would only hit the run's limit.
MAX_TIMEOUTS = 2
#: How often a waiting call checks the clock and the candidate's output volume.
POLL_S = 0.05
MAX_MESSAGE = 4000
#: Candidate objects one run may hand out (a method that returns a new object forever stops here).
MAX_HANDLES = 100_000
#: Candidate texts one test keeps for the falsifying example's check.
MAX_SPOKEN = 1000
#: What an answer does to the test (a warning issued, its text heard), done when the test gets it.
Effect = Callable[[], None]
#: `calls.each`: at most this many calls in one request ...
EACH_CHUNK = 64
#: ... and arguments of at most about this many bytes (always at least one call).
EACH_BYTES = 1 << 20


__all__ = [
    "CallAborted",
    "CandidateDied",
    "CandidateImportError",
    "CandidateOOM",
    "CandidateOutputLimit",
    "CandidateRaised",
    "CandidateSession",
    "CandidateTimeout",
    "NotPlainData",
    "OverloadAbort",
    "SandboxFailure",
    "StaleHandle",
    "control",
    "oom_kills",
]


def _builtin_name(reply: dict[str, Any]) -> str:
    """The builtin exception type the candidate's exception maps to (a trusted name)."""
    return builtin_base(reply).__name__


class CandidateSession:
    """The candidate process(es) of one run, as the trusted side talks to them.

    With ``per_test=True`` every test starts with no candidate process and a wiped scratch
    space (`begin_test`), so a candidate cannot carry state from one test to the next.
    """

    def __init__(
        self,
        ctl: socket.socket,
        *,
        call_timeout: float,
        budget: float,
        output_cap: int,
        reply_limit: int,
        per_test: bool = True,
        clock: ChargedClock | None = None,
    ) -> None:
        self.ctl = ctl
        self.call_timeout = call_timeout
        self.budget = budget
        self.output = OutputSink(output_cap)
        self.reply_limit = reply_limit
        self.per_test = per_test
        self.clock = clock or ChargedClock()
        self.sock: socket.socket | None = None
        self.reader = wire.FrameReader(reply_limit)
        self.pid: int | None = None
        #: What each candidate module defines, from the latest candidate process's hello.
        self.modules: dict[str, dict[str, Any]] | None = None
        #: Counts candidate processes: a handle lives as long as the process that made it.
        self.generation = 0
        self.handles = 0
        self.classes: dict[tuple[str, str], type] = {}
        #: The trusted side's classes for candidate exceptions and warnings (rebuilt.py).
        self.rebuilt = CandidateClasses()
        #: Handle classes by (type name, protocols) (handles.handle_type).
        self.handle_types: dict[tuple[str, frozenset[str]], type[Handle]] = {}
        self.valued_types: dict[tuple[str, str, frozenset[str]], type] = {}
        #: Module constants that are also builtin values, as the tests got them (valued.py).
        self.named_values: dict[tuple[str, str], Any] = {}
        #: What each reference of the current candidate process stands for here: (generation, it).
        self.known: dict[int, tuple[int, Any]] = {}
        #: Text the candidate gave this test (str answers, reprs, its class names): a falsifying
        #: example that holds any of it is not the generated input alone (see Results.fail).
        self.spoken: list[str] = []
        #: Once set, every later use of the candidate raises (a copy of) this: the candidate
        #: could not be imported, or left the sandbox in a state it cannot be reset from.
        self.blocked: CallAborted | None = None
        self.timeouts = 0
        self.calls = 0
        #: The payload bytes of every reply received: an "each" chunk ends at `wire.EACH_REPLY_BYTES`.
        self.received_bytes = 0
        #: The candidate was called since the last reset, so its side may hold state of a test.
        self.dirty = False
        #: The candidate side could not be reset (or the zygote stopped answering): a reused
        #: sandbox must not serve another run. A timeout, crash or flood alone is not trouble:
        #: the reset after it leaves nothing of the candidate behind, as after any run.
        self.trouble = False
        #: Re-entrant: rebuilding an answer may ask the candidate again (a dict keyed by its
        #: hashable objects hashes them, an ABC's registry asks `issubclass` of its classes),
        #: which is safe then (the answer's frame is read whole, the candidate waits for the next
        #: request); a plain lock made such an answer wait for itself for ever.
        self.lock = threading.RLock()

    # -- the candidate side's life ------------------------------------------------------
    def begin_test(self) -> None:
        """Per-test mode: no process and no file of an earlier test is left for this one."""
        self.spoken.clear()
        if not self.per_test or not self.dirty:
            return
        with self.lock:
            self._discard()
            self.reset()

    def reset(self) -> None:
        """Kill every candidate process and wipe its writable places; a failure is the candidate's."""
        reply = control(self.ctl, {"op": "reset"})
        self.dirty = False
        if not reply.get("ok"):
            self.trouble = True
            self.blocked = CandidateDied(
                "the candidate left processes, files or IPC objects that could not be removed",
                json.dumps(reply)[:500],
            )

    def _spawn(self) -> None:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        out_r, out_w = os.pipe()
        try:
            reply = control(self.ctl, {"op": "spawn"}, [theirs.fileno(), out_w])
        finally:
            theirs.close()
            os.close(out_w)
        if not isinstance(reply.get("pid"), int):  # the zygote could not start it: ours, not the candidate's
            mine.close()
            os.close(out_r)
            raise SandboxFailure(f"the candidate launcher could not start a candidate process ({reply.get('error')})")
        self.output.drain(out_r)
        self.sock, self.pid = mine, int(reply["pid"])
        self.generation += 1
        self.reader = wire.FrameReader(self.reply_limit)
        self.clock.watch(self.pid)
        try:
            hello = self._receive("importing the candidate")
        except CallAborted as exc:
            if exc.kind in ("overloaded", "infra", "timeout"):
                # Not a fault of the candidate's module: the host, us, or a limit that ran out
                # (the run's budget, or an import slower than one call's limit: a timeout, said
                # as such, not an import error).
                raise
            self.blocked = CandidateImportError(f"importing the candidate failed: {exc.summary}", exc.detail)
            raise self.blocked from None
        if hello.get("hello") is True and isinstance(hello.get("modules"), dict):
            self.modules = hello["modules"]
            return
        self.blocked = CandidateImportError(
            f"importing the candidate raised an exception (seen as {_builtin_name(hello)})",
            f"{str(hello.get('raised', ''))[:200]}: {str(hello.get('message', ''))[:MAX_MESSAGE]}\n"
            f"{str(hello.get('traceback', ''))[-MAX_MESSAGE:]}",
        )
        self._discard()
        raise self.blocked

    def close(self) -> None:
        """The run is over: close the channel to the current candidate process (the reset that
        follows every run ends the process)."""
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def _discard(self, kill_all: bool = False) -> dict[str, Any]:
        """Close the channel to the current candidate process and reap it (its exit status);
        with kill_all, also reset the whole candidate side."""
        status: dict[str, Any] = {}
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.pid is not None:
            try:
                status = control(self.ctl, {"op": "reap", "pid": self.pid})
            except SandboxFailure:
                status = {}
            self.pid = None
            self.clock.watch(None)
        if kill_all:
            try:
                self.reset()
            except SandboxFailure:
                self.trouble = True
        return status

    # -- calls --------------------------------------------------------------------------
    def _abort(self, fault: CallAborted) -> CallAborted:
        self._discard(kill_all=True)
        if isinstance(fault, (CandidateTimeout, OverloadAbort)):
            self.timeouts += 1
        return fault

    def _receive(self, doing: str) -> dict[str, Any]:
        assert self.sock is not None
        oom_before = oom_kills()
        clock = self.clock
        start_charged, start_wall = clock.charged(), time.monotonic()
        try:
            frame = self.reader.take()  # a frame left whole by an earlier read, or the header of one
        except wire.FrameTooLarge:
            raise self._abort(
                CandidateOutputLimit(f"the candidate's answer was over the {self.reply_limit}-byte limit")
            ) from None
        while frame is None:
            if self.output.exceeded:
                raise self._abort(
                    CandidateOutputLimit(f"the candidate wrote more than {self.output.cap} bytes of output")
                )
            charged = clock.charged()
            if charged - start_charged >= self.call_timeout:
                raise self._abort(
                    CandidateTimeout(f"the candidate did not answer within {self.call_timeout:g} s while {doing}")
                )
            if charged >= self.budget:
                raise self._abort(CandidateTimeout(f"the run's {self.budget:g} s time limit ran out while {doing}"))
            waited = time.monotonic() - start_wall
            if waited >= self.call_timeout * OVERLOAD_FACTOR:
                raise self._abort(
                    OverloadAbort(
                        f"the host was too busy: {doing} waited {waited:.0f} s for a CPU, "
                        f"too long to judge its {self.call_timeout:g} s limit"
                    )
                )
            if clock.wall() >= self.budget * OVERLOAD_FACTOR:
                raise self._abort(
                    OverloadAbort(
                        f"the host was too busy: the run took {clock.wall():.0f} s of wall-clock time, "
                        f"{clock.charged():.0f} s of it charged, too long to judge its {self.budget:g} s limit"
                    )
                )
            if not select.select([self.sock], [], [], POLL_S)[0]:
                continue
            try:
                frame = self.reader.feed(self.sock)
            except wire.FrameTooLarge:
                raise self._abort(
                    CandidateOutputLimit(f"the candidate's answer was over the {self.reply_limit}-byte limit")
                ) from None
            except (EOFError, OSError):
                status = self._discard(kill_all=True)
                if self.output.exceeded:
                    raise CandidateOutputLimit(
                        f"the candidate wrote more than {self.output.cap} bytes of output"
                    ) from None
                if status.get("signal") == 9 and oom_kills() > oom_before >= 0:
                    raise CandidateOOM(f"the candidate was killed for running out of memory while {doing}") from None
                how = (
                    f"exited with code {int(status['exit_code'])}"
                    if isinstance(status.get("exit_code"), int)
                    else f"was killed by signal {int(status['signal'])}"
                    if isinstance(status.get("signal"), int)
                    else "closed its channel"
                )
                raise CandidateDied(f"the candidate process {how} while {doing}") from None
        clock.tick()  # at most every MIN_INTERVAL_S: the counters are cumulative, nothing is lost
        self.received_bytes += len(frame)
        try:
            reply = wire.loads(frame, max_values=self.reply_limit // wire.BYTES_PER_VALUE)
        except wire.FrameTooLarge:
            raise self._abort(
                CandidateOutputLimit(f"the candidate's answer held more values than its {self.reply_limit}-byte limit")
            ) from None
        except (ValueError, RecursionError):
            raise self._abort(CandidateDied(f"the candidate broke the call protocol while {doing}")) from None
        if not isinstance(reply, dict):
            raise self._abort(CandidateDied(f"the candidate broke the call protocol while {doing}"))
        if self.output.exceeded:
            raise self._abort(CandidateOutputLimit(f"the candidate wrote more than {self.output.cap} bytes of output"))
        return reply

    def ensure(self, *, process: bool = True) -> dict[str, dict[str, Any]]:
        """What the candidate's modules define; with `process`, also a live candidate process."""
        if self.blocked is not None:
            raise type(self.blocked)(self.blocked.summary, self.blocked.detail)
        if self.timeouts >= MAX_TIMEOUTS:
            raise CandidateTimeout(f"not called: the candidate already exceeded a time limit {self.timeouts} times")
        if self.timeouts and self.clock.charged() >= self.budget:
            raise CandidateTimeout(f"not called: the run's {self.budget:g} s time limit was already used up")
        if self.sock is None and (process or self.modules is None):
            self._spawn()
        assert self.modules is not None
        return self.modules

    # -- references to candidate objects --------------------------------------------------
    def _refer(self, obj: Any) -> Any:
        """The reference the candidate knows `obj` by (a handle or a candidate class of this run)."""
        handle = handle_of(obj)
        if handle is not None and parts(handle)[0] is self:
            _, target, generation = parts(handle)
            if generation is not None and generation != self.generation:
                raise StaleHandle(
                    "the test used a candidate object from an earlier candidate process (objects live as long "
                    'as the process that made it: one test with candidate_process = "per-test")'
                )
            return target
        raise wire.BadWireValue(f"an object of type {type(obj).__name__}, not plain data or a candidate object")

    def _resolve(self, tag: str, body: Any, depth: int = 0) -> Any:
        if tag != "H" or type(body) is not list or len(body) != 5:
            raise wire.BadWireValue("malformed reference")
        ident, type_name, kind, methods, extra = body
        if type(ident) is not int or type(type_name) is not str or type(methods) is not list:
            raise wire.BadWireValue("malformed reference")
        known = self.known.get(ident)
        if known is not None and known[0] == self.generation:
            return known[1]  # one object, one handle: identity holds on this side too
        made = self._make(ident, type_name, kind, methods, extra, depth)
        self.known[ident] = (self.generation, made)
        return made

    def heard(self, text: str) -> None:
        """Note candidate text that could reach a failing example's printout."""
        if text and len(self.spoken) < MAX_SPOKEN:
            self.spoken.append(text[:MAX_MESSAGE])

    def _make(self, ident: int, type_name: str, kind: Any, methods: list[Any], extra: Any, depth: int) -> Any:
        self.heard(type_name[:100])
        self.handles += 1
        if self.handles > MAX_HANDLES:
            raise CandidateOutputLimit(f"the candidate handed out more than {MAX_HANDLES} objects in this run")
        if kind == "exception" and isinstance(extra, dict):
            return self.rebuilt.class_of(extra)  # its exception classes are real classes here
        if kind == "exception_value" and isinstance(extra, dict):
            return self.rebuilt.value(extra, self._resolve)  # and its exceptions real exceptions
        if kind == "valued":  # an object that is also a builtin value (valued.py)
            if not isinstance(extra, dict) or not isinstance(extra.get("protocols"), list):
                raise wire.BadWireValue("malformed reference")
            protocols = [str(p)[:200] for p in extra["protocols"][: wire.MAX_DESCRIPTION + 1]]
            inner = make_handle(
                self, ["H", ident], self.generation, type_name[:100], [str(m)[:200] for m in methods[:200]], []
            )
            value = wire.decode(extra.get("value"), depth + 1, self._resolve)  # one depth bound for all
            return make_valued(self, inner, extra.get("base"), value, type_name[:100], protocols)
        protocols = [str(p)[:200] for p in extra[: wire.MAX_DESCRIPTION + 1]] if isinstance(extra, list) else []
        handle = make_handle(
            self, ["H", ident], self.generation, type_name[:100], [str(m)[:200] for m in methods[:200]], protocols
        )
        if kind == "class":
            abcs = extra.get("abcs") if isinstance(extra, dict) else None
            return remote_class(handle, type_name, [str(a) for a in abcs[:100]] if isinstance(abcs, list) else [])
        return handle

    def named(self, module: str, name: str, kind: list[Any]) -> Any:
        """A module attribute that is not plain data, as the tests see it."""
        target = ["N", [module, name]]
        if kind[0] == "exception":
            return self.rebuilt.class_of(kind[1] if len(kind) > 1 and isinstance(kind[1], dict) else {})
        if kind[0] == "class":
            key = (module, name)
            if key not in self.classes:
                abcs = kind[1] if len(kind) > 1 and isinstance(kind[1], list) else []
                self.classes[key] = remote_class(
                    Handle(self, target, None, name, []), name, [str(a) for a in abcs[:100]]
                )
            return self.classes[key]
        if kind[0] == "valued":  # a constant that is also a builtin value: one per run (valued.py)
            key = (module, name)
            if key not in self.named_values:
                if len(kind) != 6 or not isinstance(kind[3], list) or not isinstance(kind[4], list):
                    raise wire.BadWireValue("malformed reference")
                type_name = str(kind[5])[:100]
                self.heard(type_name)
                inner = Handle(self, target, None, type_name, [str(m)[:200] for m in kind[3][:200]])
                protocols = [str(p)[:200] for p in kind[4][: wire.MAX_DESCRIPTION + 1]]
                value = wire.decode(kind[2])
                self.named_values[key] = make_valued(self, inner, kind[1], value, type_name, protocols)
            return self.named_values[key]
        methods = kind[1] if len(kind) > 1 and isinstance(kind[1], list) else []
        protocols = kind[2] if len(kind) > 2 and isinstance(kind[2], list) else []
        return make_handle(
            self, target, None, "object", [str(m) for m in methods], [str(p)[:200] for p in protocols[:10_000]]
        )

    # -- requests -----------------------------------------------------------------------
    def request(
        self, op: str, target: Handle | list[Any], args: tuple[Any, ...], kwargs: dict[str, Any], *, name: str = ""
    ) -> Any:
        """Ask the candidate process to do `op` on `target` (a handle or a named attribute)."""
        __tracebackhide__ = True
        what = name or (target[1][1] if isinstance(target, list) else "an object")
        doing = f"running {what}()" if op in ("call", "callattr") else f"{op} on {what}"
        with self.lock:
            self.ensure()
            ref = self._refer(target) if isinstance(target, Handle) else target
            try:
                with scidata.scope() as sent:  # identity and views between arrays cross
                    enc_args = wire.encode(list(args), ARGS_DEPTH, self._refer)
                    enc_kwargs = wire.encode(kwargs, ARGS_DEPTH, self._refer)
            except (wire.BadWireValue, RecursionError) as exc:
                # The test's own value cannot cross: the verifier's refusal, never an ordinary
                # TypeError that a `pytest.raises(TypeError)` could take for the candidate's.
                raise NotPlainData(f"the test passed {exc} to the candidate, which cannot cross") from None
            sync = _has_mutable(args) or _has_mutable(tuple(kwargs.values()))
            message = {"op": op, "target": ref, "name": name, "args": enc_args, "kwargs": enc_kwargs, "sync_args": sync}
            self._send(message, doing)
            self.calls += 1
            reply = self._receive(doing)
            return self._answer(reply, op, what, args, kwargs, sync, sent)

    def _send(self, message: dict[str, Any], doing: str) -> None:
        assert self.sock is not None
        try:
            self.sock.settimeout(self.call_timeout * OVERLOAD_FACTOR)
            wire.send(self.sock, message)
            self.sock.settimeout(None)
        except TimeoutError:
            raise self._abort(CandidateTimeout(f"the candidate did not read its input while {doing}")) from None
        except OSError:
            status = self._discard(kill_all=True)
            raise CandidateDied(f"the candidate process was gone before {doing} ({status})") from None
        self.dirty = True

    def call_each(self, module: str, name: str, arguments: list[tuple[Any, ...]]) -> Iterator[Any]:
        """`calls.each` on the candidate module's function `name`: its answers in order, the
        calls sent in chunks (1, 2, 4, ... up to `EACH_CHUNK` calls, `EACH_BYTES` of arguments),
        each chunk one request and one reply per call. What a call raises, or an abort of it, is
        raised at its place, after the answers before it."""
        __tracebackhide__ = True
        done, chunk = 0, 1
        while done < len(arguments):
            answers, fault = self._each_chunk(module, name, arguments[done : done + chunk])
            for value, later in answers:
                for effect in later:  # what one call's answer does, when the test gets it
                    effect()
                yield value
            if fault is not None:
                for effect in fault[1]:
                    effect()
                raise fault[0]
            done += len(answers)
            chunk = min(chunk * 2, EACH_CHUNK)

    def _each_chunk(
        self, module: str, name: str, arguments: list[tuple[Any, ...]]
    ) -> tuple[list[tuple[Any, list[Effect]]], tuple[BaseException, list[Effect]] | None]:
        """One "each" request: the answers received, each with what it does to the test when the
        test gets it (`_answer`'s `later`), and what ended the chunk early (or None)."""
        __tracebackhide__ = True
        doing = f"running {name}()"
        with self.lock:
            self.ensure()
            encoded: list[Any] = []
            sent: list[list[Any]] = []
            refused: CallAborted | None = None
            size = 0
            for args in arguments:
                try:
                    with scidata.scope() as values:
                        encoded.append(wire.encode(list(args), ARGS_DEPTH, self._refer))
                except (wire.BadWireValue, RecursionError) as exc:
                    refused = NotPlainData(f"the test passed {exc} to the candidate, which cannot cross")
                    break
                except CallAborted as exc:  # a handle of an earlier process: raised at its place
                    refused = exc
                    break
                sent.append(values)
                size += len(wire.dumps(encoded[-1]))
                if size >= EACH_BYTES:
                    break
            if not encoded:
                return [], (refused, []) if refused is not None else None
            target = ["N", [module, name]]
            message = {"op": "each", "target": target, "name": name, "args": _NO_ARGS, "kwargs": _NO_KWARGS}
            self._send({**message, "calls": encoded}, doing)
            self.calls += len(encoded)
            answers: list[tuple[Any, list[Effect]]] = []
            received = self.received_bytes
            for index, values in enumerate(sent):
                last = index == len(sent) - 1
                try:
                    reply = self._receive(doing)
                except CallAborted as exc:  # the process is gone already (`_abort`)
                    if isinstance(exc, (CandidateTimeout, OverloadAbort)):  # counted when the test meets it
                        self.timeouts -= 1
                        return answers, (exc, [self._timed_out])
                    return answers, (exc, [])
                spoken = len(self.spoken)
                ends = wire.each_ends(reply, self.received_bytes - received)  # where the candidate stops too
                later: list[Effect] = []
                try:
                    value = self._answer(reply, "call", name, (), {}, False, values, later)
                except BaseException as exc:  # noqa: BLE001 - the candidate's exception, rebuilt, or an abort
                    if isinstance(exc, CallAborted) and not last and not ends:
                        self._discard()  # it ended here, the candidate process did not: it may still answer
                    return answers, (exc, [self._unheard(spoken), *later])
                answers.append((value, [self._unheard(spoken), *later]))
                if ends:
                    return answers, None
            return answers, (refused, []) if refused is not None else None

    def _timed_out(self) -> None:
        self.timeouts += 1

    def _unheard(self, mark: int) -> Effect:
        """Take back the text heard since `mark` (`spoken`): the effect that hears it again."""
        text = self.spoken[mark:]
        del self.spoken[mark:]
        return functools.partial(self._hear_all, text)

    def _hear_all(self, texts: list[str]) -> None:
        for text in texts:
            self.heard(text)

    def _answer(
        self,
        reply: dict[str, Any],
        op: str,
        what: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        sync: bool,
        sent: list[Any] | None = None,
        later: list[Callable[[], None]] | None = None,
    ) -> Any:
        """The value of `reply` (or what it raised, raised). With `later`, what the answer does to
        the test (its warnings issued, its text heard) is put there instead of done now."""
        __tracebackhide__ = True
        if "not_plain" in reply:
            raise NotPlainData(f"{what}() answered with something that cannot cross", str(reply["not_plain"])[:200])
        if "not_plain_args" in reply:
            raise NotPlainData(f"{what}() left its arguments holding something that cannot cross")
        if "protocol_error" in reply:
            raise CandidateDied(
                f"the candidate broke the call protocol while running {what}",
                str(reply["protocol_error"])[:MAX_MESSAGE],
            )
        try:
            if sync:
                with scidata.scope():
                    args_after = wire.decode(reply["args_after"], ARGS_DEPTH, self._resolve)
                    kwargs_after = wire.decode(reply["kwargs_after"], ARGS_DEPTH, self._resolve)
                _sync_in_place(list(args), args_after)
                _sync_in_place(kwargs, kwargs_after)
            stop = reply.get("stop") is True
            if stop and op != "next":  # only next() may end an iteration
                raise CandidateDied(f"the candidate broke the call protocol while running {what}")
            if "raised" in reply:
                value = None
            elif reply.get("not_implemented") is True and op == "dunder":
                value = NotImplemented  # a special method's own answer: Python goes on from it
            else:
                with scidata.scope(sent):  # after the sync: a view of an argument sees its new contents
                    value = wire.decode(reply["value"], resolve=self._resolve)
            raised = self.rebuilt.rebuild(reply, self._resolve) if "raised" in reply else None
            warned = reply.get("warnings")
            if warned is not None and type(warned) is not list:
                raise ValueError("warnings")
        except scidata.Aliased as exc:
            raise NotPlainData(
                f"{what}() answered with {exc}, which does not cross as it is in one process", str(exc)[:200]
            ) from None
        except scidata.NotCarried as exc:
            raise NotPlainData(
                f"{what}() changed an argument in place in a way that cannot be carried back to the test's "
                f"object: {exc.what}"
            ) from None
        except (wire.BadWireValue, KeyError, ValueError, TypeError, RecursionError) as exc:
            raise NotPlainData(f"{what}() answered with malformed data", repr(exc)[:500]) from None
        for payload in (warned or [])[: wire.MAX_WARNINGS]:
            if isinstance(payload, dict):
                if later is None:
                    self.rebuilt.warn(payload, self._resolve)
                else:  # made now (its references are this process's), issued when the test gets the answer
                    later.append(functools.partial(self.rebuilt.issue, self.rebuilt.warning(payload, self._resolve)))
        if type(value) is str:
            if later is None:
                self.heard(value)
            else:
                later.append(functools.partial(self.heard, value))
        if raised is not None:
            raise raised
        if stop:
            raise StopIteration(value) if value is not None else StopIteration
        return value

    def call(self, module: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Call the candidate module's function `name`."""
        __tracebackhide__ = True
        return self.request("call", ["N", [module, name]], args, kwargs, name=name)


class CandidateModule(types.ModuleType):
    """Stands in for one of the candidate's modules on the trusted side."""

    def __init__(self, name: str, session: CandidateSession) -> None:
        super().__init__(name, "The candidate, running in a separate process (verifier proxy).")
        self.__dict__["_session"] = session
        self.__dict__["__path__"] = []  # a package, as far as imports of submodules go

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        session: CandidateSession = self.__dict__["_session"]
        with session.lock:
            modules = session.ensure(process=False)
        child = f"{self.__name__}.{attr}"
        names = modules.get(self.__name__, {})
        kind = names.get(attr, ["module"])
        if kind[0] == "module":  # a submodule (what the package's own attribute is, if it has one)
            if child in modules and child in sys.modules:
                return sys.modules[child]
            raise AttributeError(f"the candidate module {self.__name__!r} has no attribute {attr!r}")
        if kind[0] == "callable":
            return _make_function(session, self.__name__, attr)
        if kind[0] == "exception":
            return session.named(self.__name__, attr, kind)
        if kind[0] == "not_plain":
            raise NotPlainData(
                f"the candidate's {attr[:100]!r} cannot cross: neither a copy nor a handle answers as it does",
                str(kind[1:2])[:200],
            )
        if kind[0] in ("value", "valued"):
            try:
                return wire.decode(kind[1]) if kind[0] == "value" else session.named(self.__name__, attr, kind)
            except (wire.BadWireValue, ValueError, TypeError, RecursionError):
                raise NotPlainData(f"the candidate's {attr!r} is malformed data") from None
        return session.named(self.__name__, attr, kind)


def forwarded(function: Any) -> tuple[CandidateSession, str, str] | None:
    """(session, module, name) when `function` is a candidate module's function as the tests hold
    it (`_make_function`'s), else None. Known by its code object, which only this module makes."""
    if type(function) is not types.FunctionType or function.__code__ is not _FORWARD_CODE:
        return None
    cells = dict(zip(function.__code__.co_freevars, function.__closure__ or (), strict=True))
    session, module, name = (cells[key].cell_contents for key in ("session", "module", "name"))
    return session, module, name


def _make_function(session: CandidateSession, module: str, name: str) -> Any:
    def forward(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        return session.call(module, name, args, kwargs)

    forward.__name__ = forward.__qualname__ = name
    forward.__module__ = module
    forward.__doc__ = f"{module}.{name}, called in the candidate's process."
    return forward


_NO_ARGS, _NO_KWARGS = wire.encode([]), wire.encode({})
_FORWARD_CODE = _make_function(None, "", "").__code__  # type: ignore[arg-type]
