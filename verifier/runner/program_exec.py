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
import shutil
import stat
import sys
import types
from typing import NoReturn

from .languages import BUILD_DIR, LANGUAGES, Language, command, java_main_class
from .newborn import keep_only_descriptors, say_ready
from .protocol import tree


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


def _enter(fds: list[int], cpu_backstop_s: int, ready_fd: int, directory: str) -> None:
    """The set-up every program process of another language shares with `run`: its own session,
    the three pipes as 0, 1, 2 and nothing else of the zygote's, the CPU backstop, its directory."""
    os.setsid()
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)
    keep_only_descriptors(0, 1, 2, ready_fd)
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_backstop_s, cpu_backstop_s))
    os.chdir(directory)


def _environment(lang: Language, directory: str) -> dict[str, str]:
    return {**os.environ, "HOME": directory, **dict(lang.env)}


def _executable(argv0: str, env: dict[str, str]) -> str:
    """The file `argv0` names (a relative path, or a command on PATH); OSError when there is none
    (checked before the candidate's part runs: ours, never the program's exit code)."""
    found = argv0 if "/" in argv0 else shutil.which(argv0, path=env.get("PATH"))
    if found is None or not os.access(found, os.X_OK):
        raise FileNotFoundError(argv0)
    return found


def _in_memory(path: str) -> str:
    """A compiled binary as a file exec can run: the candidate's scratch space is mounted noexec
    (Docker's tmpfs default), which stays as it is; the binary's bytes go to a memfd (close-on-exec:
    the program does not inherit it), run through its /proc/self/fd link."""
    with open(path, "rb") as fh:
        data = fh.read()
    if not data:
        raise ValueError("an empty binary")
    fd = os.memfd_create("program", os.MFD_CLOEXEC)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    return f"/proc/self/fd/{fd}"


def run_native(
    fds: list[int], directory: str, language: str, source: str, memory_mib: int, cpu_backstop_s: int, ready_fd: int
) -> NoReturn:
    """Become one case of a program in `language` (not Python): exec its run command
    (languages.py) in `directory`, where the zygote's child wrote the source and, for a compiled
    language, the compile step's artifact. Never returns."""
    lang = LANGUAGES[language]
    _enter(fds, cpu_backstop_s, ready_fd, directory)
    env = _environment(lang, directory)
    with open(source, "rb") as fh:
        main_class = java_main_class(fh.read()) if language == "java" else "Main"
    argv = command(lang.run, source=source, memory_mib=memory_mib, main_class=main_class)
    native = lang.compiled and argv[0].startswith("./")
    executable = _in_memory(argv[0]) if native else _executable(argv[0], env)
    say_ready(ready_fd)
    try:
        os.execve(executable, argv, env)
    finally:
        os._exit(127)  # as a shell says a command could not run


def compile_program(
    fds: list[int], directory: str, language: str, source: str, cpu_backstop_s: int, ready_fd: int
) -> NoReturn:
    """The compile step of a program in `language`: run its compiler (languages.py) in
    `directory` with its stdout and stderr on fds[2]; when it exits 0, write what it left under
    BUILD_DIR to fds[1] (protocol.tree) for the trusted side to keep. Exits with the compiler's
    code (128 + a signal's number when one killed it). Never returns."""
    lang = LANGUAGES[language]
    assert lang.compile is not None
    _enter(fds, cpu_backstop_s, ready_fd, directory)
    env = _environment(lang, directory)
    argv = command(lang.compile, source=source)
    executable = _executable(argv[0], env)
    os.makedirs(BUILD_DIR, exist_ok=True)
    say_ready(ready_fd)
    code = 1
    try:
        pid = os.fork()
        if pid == 0:
            try:
                os.dup2(2, 1)  # the compiler's messages: never the artifact's channel
                os.execve(executable, argv, env)
            finally:
                os._exit(127)
        status = os.waitpid(pid, 0)[1]
        code = 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.waitstatus_to_exitcode(status)
        if code == 0:
            artifact: dict[str, bytes] = {}
            for root, _dirs, names in os.walk(BUILD_DIR):
                for name in names:
                    path = os.path.join(root, name)
                    if not stat.S_ISREG(os.lstat(path).st_mode):
                        continue  # a link or a device is no part of an artifact
                    with open(path, "rb") as fh:
                        artifact[path] = fh.read()
            data = memoryview(tree(artifact))
            while data:
                data = data[os.write(1, data) :]
    except BaseException:  # noqa: BLE001 - the artifact could not be sent: no artifact, exit 1
        code = code or 1
    os._exit(code)
