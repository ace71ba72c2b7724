"""The trusted server as it was: for suites that run their jobs in it (`trusted_process = "shared"`).

By default every job's tests run in a fresh fork of the trusted server, so nothing a job's
tests do to the trusted process reaches the next job. That fork costs more than the tests of
a small suite (a HumanEval check): every page the child touches is copied. A direct suite may
opt out with `trusted_process = "shared"`: its jobs' tests then run in the server itself, and
after each job `Pristine.settle` puts back what a job may change on purpose and compares the
rest with the server as it was before its first job:

- put back: modules the job imported (dropped, so the next job imports them afresh, and unbound
  from their package when it was there before) and the `random` module's state, and numpy's
  global one when numpy was preloaded (every job starts from the same ones, as every fork did);
- compared: every module's attributes (the objects bound, and the attributes of every class a
  module defines), `sys` settings (path, hooks, recursion limit, trace and profile functions,
  integer digit limit), the environment, the working directory, warning filters, exit
  handlers, signal handlers, resource limits, priority, umask, the collector's settings,
  threads, open descriptors, processes of the trusted user, files in the trusted directory, and
  when an environment preloaded them, numpy's print and error options (its error callback and
  buffer size too) and pandas' options.

A difference is never the verdict of the job that made it (its result is already written); it
ends the sandbox, so the next job starts in a fresh one. What this cannot see: changes inside
objects that stay the same object (an element appended to a list some module holds, a
`decimal` context). A suite whose tests change such things must keep the default.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # signal's C half: ints, no enum members
import atexit
import gc
import operator
import os
import random
import resource
import sys
import threading
import time
from typing import Any

from .procfs import processes_of
from .protocol import SUITE_DIR, TRUSTED_DIR, TRUSTED_UID

#: How long threads of a job (its candidate's output readers) get to end after the reset.
THREADS_GRACE_S = 1.0
_RLIMITS = tuple(getattr(resource, n) for n in dir(resource) if n.startswith("RLIMIT_"))
#: Signal numbers as plain ints: `signal.valid_signals` and `signal.getsignal` build an enum
#: member for each, which cost more than the rest of `_state` together.
_SIGNALS = tuple(sorted(_signal.valid_signals()))


def _namespaces() -> list[tuple[str, object, dict[str, Any]]]:
    """Every module's attributes, and those of each class it defines: (name, owner, a copy)."""
    found: list[tuple[str, object, dict[str, Any]]] = []
    for name, module in list(sys.modules.items()):
        attrs = dict(getattr(module, "__dict__", {}))
        found.append((name, module, attrs))
        found += [
            (f"{name}.{attr}", value, dict(vars(value)))
            for attr, value in attrs.items()
            if isinstance(value, type) and value.__module__ == name
        ]
    return found


def _umask() -> int:
    mask = os.umask(0o077)
    os.umask(mask)
    return mask


def _descriptors() -> list[str]:
    found = []
    for entry in os.listdir("/proc/self/fd"):
        try:
            found.append(f"{entry}:{os.readlink(f'/proc/self/fd/{entry}')}")
        except OSError:
            continue  # the one listdir itself had open
    return sorted(found)


def _flat(options: object, prefix: str = "") -> dict[str, object]:
    """pandas' nested option dict as {"display.precision": 6, ...}."""
    if type(options) is not dict:
        return {prefix: options}
    out: dict[str, object] = {}
    for key, value in options.items():
        out.update(_flat(value, f"{prefix}{key}."))
    return out


def _library_settings() -> dict[str, object]:
    """What numpy and pandas keep for the whole process besides their module attributes, when
    they were imported (an environment's preload): numpy's print options, floating-point error
    handling (and its callback) and buffer size, pandas' options. Compared, not put back; never
    imports either."""
    found: dict[str, object] = {}
    np = sys.modules.get("numpy")
    if np is not None:
        try:
            found["numpy"] = (np.get_printoptions(), np.geterr(), np.geterrcall(), np.getbufsize())
        except Exception:  # noqa: BLE001 - a numpy a job broke: not as it was
            found["numpy"] = "unreadable"
    config = sys.modules.get("pandas._config.config")
    if config is not None:
        found["pandas"] = _flat(getattr(config, "_global_config", None))
    return found


def _state() -> dict[str, object]:
    warnings = sys.modules.get("warnings")
    return {
        "numpy and pandas settings": _library_settings(),
        "sys settings": (
            list(sys.path),
            list(sys.meta_path),
            list(sys.path_hooks),
            sys.getrecursionlimit(),
            sys.getswitchinterval(),
            sys.gettrace(),
            sys.getprofile(),
            sys.get_int_max_str_digits(),
        ),
        "environment": dict(os.environ),
        "working directory": os.getcwd(),
        "warning filters": list(warnings.filters) if warnings is not None else None,  # type: ignore[attr-defined]
        "exit handlers": atexit._ncallbacks(),  # noqa: SLF001 - the only way to count them
        "signal handlers": [_signal.getsignal(s) for s in _SIGNALS],
        "resource limits": [resource.getrlimit(r) for r in _RLIMITS],
        "priority": (os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0)),
        "umask": _umask(),
        "collector": (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()),
        "descriptors": _descriptors(),
        "processes": processes_of(TRUSTED_UID, os.getpid()),
        "trusted files": sorted(set(os.listdir(TRUSTED_DIR)) - {os.path.basename(SUITE_DIR)}),
    }


def _numpy_random() -> Any:
    """numpy's global RandomState (what `numpy.random.seed` and `numpy.random.rand` use) when
    numpy is imported, else None (numpy itself is never imported here). `numpy.random` is
    imported with it when numpy alone was: a job's import of it would be dropped after the job,
    but its extension module's state would not (an extension is initialised once a process)."""
    if "numpy" not in sys.modules:
        return None
    import importlib

    return getattr(importlib.import_module("numpy.random.mtrand"), "_rand", None)


def _same(a: object, b: object) -> bool:
    try:
        return bool(a == b)  # identical objects compare equal without calling their __eq__
    except Exception:  # noqa: BLE001 - an __eq__ that raises: not the same
        return False


class Pristine:
    """The trusted server before its first job; `settle` after each job."""

    def __init__(self) -> None:
        self.threads = threading.active_count()
        #: numpy's global random state, when numpy was imported before the first job (an
        #: environment's preload, `protocol.data_preload`): its draws are put back like `random`'s.
        self.numpy_random = _numpy_random()
        self.numpy_state = None if self.numpy_random is None else self.numpy_random.get_state()
        self.module_objects = dict(sys.modules)
        self.random_state = random.getstate()
        namespaces = _namespaces()
        self.names = [name for name, _, _ in namespaces]
        self.owners = [owner for _, owner, _ in namespaces]
        self.attrs = [attrs for _, _, attrs in namespaces]
        self.state = _state()
        #: What the last `settle` found changed.
        self.changed: list[str] = []

    def settle(self) -> list[str]:
        """After a job (and the reset that ended its candidate processes): put back what a job
        may change, and name what else differs from before the first job ([] when nothing; also
        kept as `changed`)."""
        for name in set(sys.modules) - set(self.module_objects):
            module = sys.modules.pop(name)
            # Importing `a.b` binds `b` on the package `a` too: unbound with it, when the package
            # was there before (a suite's `from verifier_runner.calls import each`). Anything
            # else there stays, and is compared below.
            package, _, child = name.rpartition(".")
            owner = self.module_objects.get(package)
            if owner is not None and vars(owner).get(child) is module:
                delattr(owner, child)
        random.setstate(self.random_state)
        if self.numpy_random is not None:
            self.numpy_random.set_state(self.numpy_state)
        deadline = time.monotonic() + THREADS_GRACE_S
        while threading.active_count() > self.threads and time.monotonic() < deadline:
            time.sleep(0.002)  # its candidate's output readers end once the reset closed their pipes
        changed = [] if threading.active_count() <= self.threads else ["threads"]
        changed += [f"module {n}" for n, module in self.module_objects.items() if sys.modules.get(n) is not module]
        try:  # one pass in C; identical objects compare equal without calling their __eq__
            same = list(map(operator.eq, map(vars, self.owners), self.attrs))
        except Exception:  # noqa: BLE001 - an __eq__ that raises: find it one by one
            same = [_same(vars(owner), attrs) for owner, attrs in zip(self.owners, self.attrs, strict=True)]
        changed += [f"module {name}" for name, ok in zip(self.names, same, strict=True) if not ok]
        state = _state()
        changed += [key for key, value in self.state.items() if not _same(value, state[key])]
        self.changed = changed
        return changed
