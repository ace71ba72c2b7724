"""Trusted side: `solution` as the tests see it. A module whose functions forward calls
to a separate candidate process as plain data.

Faults of the candidate (it died, hung, flooded its output, returned a non-plain
object) are raised as `CandidateFault`, a BaseException: a suite's
``pytest.raises(Exception)`` cannot swallow them, so a crash never passes for an
expected error. Exceptions the candidate *raised* come back as the nearest builtin
exception type, so ``pytest.raises(TypeError)`` works as usual.
"""

from __future__ import annotations

import builtins
import json
import os
import select
import socket
import threading
import time
import types
from typing import Any

from . import wire

#: After this many call timeouts in one run, further calls fail at once: the verdict is a
#: timeout either way, and waiting out every remaining test would only hit the run's limit.
MAX_TIMEOUTS = 2
#: How often a waiting call checks the candidate's output volume.
POLL_S = 0.05
OOM_FILES = ("/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events")


class CandidateFault(BaseException):
    """The candidate failed in a way that is not an ordinary exception."""

    kind = "candidate_died"


class CandidateDied(CandidateFault):
    kind = "candidate_died"


class CandidateTimeout(CandidateFault):
    kind = "timeout"


class CandidateOOM(CandidateFault):
    kind = "oom"


class CandidateOutputLimit(CandidateFault):
    kind = "output_limit"


class NotPlainData(CandidateFault):
    kind = "not_plain_data"


class CandidateImportError(CandidateFault):
    kind = "import_error"


class CandidateRaised(Exception):
    """The candidate raised an exception with no builtin base class we could map to."""


def _oom_kills() -> int:
    for path in OOM_FILES:
        try:
            with open(path) as fh:
                for line in fh:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except OSError:
            continue
    return -1


class _OutputSink:
    """Drains candidate output pipes; keeps `cap` bytes in all, notes anything beyond."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.buffer = bytearray()
        self.total = 0
        self.lock = threading.Lock()

    def drain(self, fd: int) -> None:
        def pump() -> None:
            with os.fdopen(fd, "rb", buffering=0) as fh:
                while True:
                    chunk = fh.read(65536)
                    if not chunk:
                        return
                    with self.lock:
                        self.total += len(chunk)
                        room = self.cap - len(self.buffer)
                        if room > 0:
                            self.buffer += chunk[:room]

        threading.Thread(target=pump, daemon=True, name="candidate-output").start()

    @property
    def exceeded(self) -> bool:
        return self.total > self.cap


class CandidateSession:
    """One candidate process at a time; a fresh one after the previous died or hung."""

    def __init__(self, ctl: socket.socket, *, call_timeout: float, deadline: float, output_cap: int) -> None:
        self.ctl = ctl
        self.call_timeout = call_timeout
        self.deadline = deadline
        self.output = _OutputSink(output_cap)
        self.sock: socket.socket | None = None
        self.pid: int | None = None
        self.names: dict[str, Any] | None = None
        self.import_error: str | None = None
        self.import_fault: type[CandidateFault] = CandidateImportError
        self.timeouts = 0
        self.calls = 0
        self.lock = threading.Lock()

    # -- zygote control -------------------------------------------------------------
    def _ctl(self, request: dict[str, Any], fds: list[int] | None = None) -> dict[str, Any]:
        try:
            socket.send_fds(self.ctl, [json.dumps(request).encode()], fds or [])
            self.ctl.settimeout(30)
            data = self.ctl.recv(65536)
        except OSError as exc:
            raise CandidateDied(f"the candidate launcher is gone ({exc.__class__.__name__})") from None
        if not data:
            raise CandidateDied("the candidate launcher is gone")
        reply: dict[str, Any] = json.loads(data)
        return reply

    def _spawn(self) -> None:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        out_r, out_w = os.pipe()
        reply = self._ctl({"op": "spawn"}, [theirs.fileno(), out_w])
        theirs.close()
        os.close(out_w)
        self.output.drain(out_r)
        self.sock, self.pid = mine, int(reply["pid"])
        try:
            hello = self._receive("importing the candidate")
        except CandidateFault as exc:
            self.import_error, self.import_fault = str(exc), type(exc)
            raise
        if hello.get("hello"):
            self.names = hello["names"]
        else:
            self.import_error = (
                f"importing the candidate raised {hello.get('raised')}: {hello.get('message', '')}\n"
                f"{hello.get('traceback', '')}"
            )
            self._discard()

    def _discard(self, kill_all: bool = False) -> dict[str, Any]:
        status: dict[str, Any] = {}
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if kill_all:
            try:
                self._ctl({"op": "killall"})
            except CandidateDied:
                pass
        if self.pid is not None:
            try:
                status = self._ctl({"op": "reap", "pid": self.pid})
            except CandidateDied:
                status = {}
            self.pid = None
        return status

    # -- calls ----------------------------------------------------------------------
    def _receive(self, doing: str) -> dict[str, Any]:
        assert self.sock is not None
        oom_before = _oom_kills()
        limit = min(self.call_timeout, self.deadline - time.monotonic())
        if limit <= 0:
            self._discard(kill_all=True)
            raise CandidateTimeout("the whole-run time limit ran out")
        give_up = time.monotonic() + limit
        while True:
            ready, _, _ = select.select([self.sock], [], [], POLL_S)
            if ready:
                break
            if self.output.exceeded:
                self._discard(kill_all=True)
                raise CandidateOutputLimit(f"the candidate wrote more than {self.output.cap} bytes of output")
            if time.monotonic() >= give_up:
                self._discard(kill_all=True)
                self.timeouts += 1
                raise CandidateTimeout(f"the candidate did not answer within {limit:.1f} s while {doing}")
        try:
            reply: dict[str, Any] = wire.recv(self.sock)
        except (EOFError, OSError, ValueError, RecursionError, wire.NotPlainData) as exc:
            status = self._discard(kill_all=True)
            if self.output.exceeded:
                raise CandidateOutputLimit(f"the candidate wrote more than {self.output.cap} bytes of output") from None
            if status.get("signal") == 9 and _oom_kills() > oom_before >= 0:
                raise CandidateOOM(f"the candidate was killed for running out of memory while {doing}") from None
            how = (
                f"exited with code {status['exit_code']}"
                if "exit_code" in status
                else f"was killed by signal {status['signal']}"
                if "signal" in status
                else f"closed the channel ({exc.__class__.__name__})"
            )
            raise CandidateDied(f"the candidate process {how} while {doing}") from None
        if self.output.exceeded:
            self._discard(kill_all=True)
            raise CandidateOutputLimit(f"the candidate wrote more than {self.output.cap} bytes of output")
        return reply

    def ensure(self) -> dict[str, Any]:
        if self.import_error is not None:
            raise self.import_fault(self.import_error)
        if self.timeouts >= MAX_TIMEOUTS:
            raise CandidateTimeout(
                f"not called: the candidate already exceeded the time limit {self.timeouts} times in this run"
            )
        if self.sock is None:
            self._spawn()
            if self.import_error is not None:
                raise self.import_fault(self.import_error)
        assert self.names is not None
        return self.names

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        __tracebackhide__ = True
        with self.lock:
            self.ensure()
            try:
                enc_args, enc_kwargs = wire.encode(list(args)), wire.encode(kwargs)
            except wire.NotPlainData as exc:
                raise TypeError(f"the test passed {exc} to the candidate") from None
            sync = _has_mutable(args) or _has_mutable(kwargs)
            assert self.sock is not None
            wire.send(self.sock, {"name": name, "args": enc_args, "kwargs": enc_kwargs, "sync_args": sync})
            self.calls += 1
            reply = self._receive(f"running {name}()")
        if "not_plain" in reply:
            raise NotPlainData(f"{name}() {reply['not_plain']}")
        if "protocol_error" in reply:
            raise CandidateDied(f"the candidate broke the call protocol: {reply['protocol_error']}")
        try:
            if sync:
                _sync_in_place(list(args), wire.decode(reply["args_after"]))
                _sync_in_place(kwargs, wire.decode(reply["kwargs_after"]))
            value = wire.decode(reply["value"]) if "raised" not in reply else None
        except (wire.NotPlainData, KeyError, ValueError, TypeError, RecursionError) as exc:
            raise NotPlainData(f"{name}() answered with malformed data ({exc!r})") from None
        if "raised" in reply:
            raise _rebuild_exception(reply)
        return value


def _rebuild_exception(reply: dict[str, Any]) -> BaseException:
    exc = _exception_for(reply)
    exc.verifier_raised_by_candidate = str(reply.get("raised", "Exception"))  # type: ignore[attr-defined]
    return exc


def _exception_for(reply: dict[str, Any]) -> BaseException:
    message = str(reply.get("message", ""))
    raised = str(reply.get("raised", "Exception"))
    for name in reply.get("mro", []):
        cls = getattr(builtins, str(name), None)
        if isinstance(cls, type) and issubclass(cls, Exception):
            text = message if name == raised else f"{raised}: {message}"
            try:
                return cls(text)
            except Exception:  # noqa: BLE001 - classes with unusual constructors
                return CandidateRaised(f"{raised}: {message}")
    # SystemExit, KeyboardInterrupt, GeneratorExit & co: a candidate may not end the run.
    return CandidateRaised(f"the candidate raised {raised}: {message}")


def _has_mutable(value: Any) -> bool:
    if isinstance(value, (list, dict, set)):
        return True
    if isinstance(value, tuple):
        return any(_has_mutable(v) for v in value)
    return False


def _sync_in_place(original: Any, after: Any) -> None:
    """Carry the candidate's in-place mutation of an argument back to the test's object."""
    if type(original) is list and type(after) is list:
        if len(original) == len(after):
            for i, (o, a) in enumerate(zip(original, after, strict=True)):
                if type(o) in (list, dict, set) and type(o) is type(a):
                    _sync_in_place(o, a)
                elif type(o) is tuple and type(a) is tuple and _has_mutable(o):
                    _sync_in_place(list(o), list(a))
                elif not (type(o) is type(a) and o == a):
                    original[i] = a
        else:
            original[:] = after
    elif type(original) is dict and type(after) is dict:
        for key in list(original):
            if key not in after:
                del original[key]
        for key, a in after.items():
            o = original.get(key, _MISSING)
            if type(o) in (list, dict, set) and type(o) is type(a):
                _sync_in_place(o, a)
            elif o is _MISSING or not (type(o) is type(a) and o == a):
                original[key] = a
    elif type(original) is set and type(after) is set and original != after:
        original.clear()
        original.update(after)


_MISSING = object()


class CandidateModule(types.ModuleType):
    """Stands in for the candidate module on the trusted side."""

    def __init__(self, name: str, session: CandidateSession) -> None:
        super().__init__(name, "The candidate, running in a separate process (verifier proxy).")
        self.__dict__["_session"] = session

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        session: CandidateSession = self.__dict__["_session"]
        names = session.ensure()
        if attr not in names:
            raise AttributeError(f"the candidate module has no attribute {attr!r}")
        kind = names[attr]
        if kind[0] == "callable":
            return _make_function(session, attr, self.__name__)
        if kind[0] == "value":
            return wire.decode(kind[1])
        raise NotPlainData(f"the candidate's {attr!r} is an object of type {kind[1]}, not plain data or a function")


def _make_function(session: CandidateSession, name: str, module: str) -> Any:
    def forward(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True
        return session.call(name, args, kwargs)

    forward.__name__ = forward.__qualname__ = name
    forward.__module__ = module
    forward.__doc__ = f"{module}.{name}, called in the candidate's process."
    return forward
