"""The candidate side of one program case: run the candidate's source as `__main__`, with
stdin, stdout and stderr on the pipes the trusted side made.

Runs in a child the zygote forked, after it became the candidate's uid with no capability
(see candidate_setup.py): the interpreter is already started and its common modules imported, so a
case costs a fork, not an interpreter start. Everything here runs beside the candidate's code
and is not trusted; the trusted side only reads the pipes and the kernel's account of the
process (exit status, CPU time, peak memory).

What the program sees is what `python3 solution.py < input` would give it: `sys.stdin`,
`sys.stdout` (block-buffered) and `sys.stderr` (line-buffered) in UTF-8, `sys.argv ==
[path]`, `__name__ == "__main__"`, its file at `path`, exit codes as the interpreter's
(an uncaught exception prints a traceback and exits 1; `sys.exit(x)` as usual; a failed
final flush exits 120), atexit handlers and non-daemon threads waited for at the end.
"""

from __future__ import annotations

import atexit
import builtins
import os
import resource
import sys
import types
from typing import NoReturn

from .newborn import keep_only_descriptors, say_ready


def _stdio() -> None:
    sys.stdin = open(0, encoding="utf-8", newline="\n", closefd=False)  # noqa: SIM115
    sys.stdout = open(1, "w", encoding="utf-8", newline="\n", closefd=False)  # noqa: SIM115
    sys.stderr = open(  # noqa: SIM115
        2, "w", encoding="utf-8", errors="backslashreplace", newline="\n", buffering=1, closefd=False
    )


def _exit_code(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def run(fds: list[int], path: str, cpu_backstop_s: int, ready_fd: int) -> NoReturn:
    """Become the program at `path` (written by the zygote's child) for one case: fds are
    [stdin, stdout, stderr]; `ready_fd` is told once the set-up worked (newborn.say_ready), so
    that a failure before the program's code runs is never taken for its exit code. Never returns."""
    os.setsid()
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)
    keep_only_descriptors(0, 1, 2, ready_fd)  # nothing of the zygote's beyond the three pipes
    # A backstop only: the trusted side ends a case on its charged clock long before this.
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_backstop_s, cpu_backstop_s))
    directory = os.path.dirname(path)
    with open(path, "rb") as fh:
        source = fh.read()
    os.chdir(directory)
    _stdio()
    atexit._clear()  # noqa: SLF001 - the zygote's own handlers are not the program's
    main = types.ModuleType("__main__")
    main.__file__ = path
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    sys.argv = [path]
    sys.path[0:0] = [directory]
    code = 0
    say_ready(ready_fd)
    try:
        exec(compile(source, path, "exec"), main.__dict__)
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException as exc:  # noqa: BLE001 - as the interpreter does: traceback, exit 1
        tb = exc.__traceback__
        exc = exc.with_traceback(tb.tb_next if tb is not None else None)  # from the program's own frame on
        sys.excepthook(type(exc), exc, exc.__traceback__)
        code = 1
    try:
        # As the interpreter at exit: wait for non-daemon threads, if the program imported
        # `threading` (not imported here: its after-fork hook would cost every candidate process).
        shutdown = getattr(sys.modules.get("threading"), "_shutdown", None)
        if shutdown is not None:
            shutdown()
        atexit._run_exitfuncs()  # noqa: SLF001 - the interpreter's exit, as it would run it
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException:  # noqa: BLE001
        code = code or 1
    try:
        sys.stdout.flush()
    except BaseException:  # noqa: BLE001 - e.g. the reader went away: the interpreter exits 120
        code = 120
    try:
        sys.stderr.flush()
    except BaseException:  # noqa: BLE001
        pass
    os._exit(code)
