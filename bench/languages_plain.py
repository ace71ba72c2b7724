"""A plain, unsandboxed judge for programs in other languages (issue 36): what a simple judge
does, on the host, with no isolation at all (trusted programs only: the corpus of
tests/programs/language_corpus/).

The same commands as the sandbox (`verifier.runner.languages`: the compile step in the program's
own directory, then one process per case), the same per-case time limit (wall-clock here), the
same comparison (`verifier.runner.cases.compare`, in the problem's mode) and the same order of
verdicts: compile_error, then the worst case's in the verdict's order (timeout, error, failed);
after two cases out of time the rest are not run. The host's toolchains are the host's (their
versions may differ from the image's); a language whose toolchain the host lacks is skipped
(`available`).

    python bench/languages_plain.py      # judges the corpus, prints one line per solution
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from verifier.runner.cases import compare  # noqa: E402
from verifier.runner.languages import LANGUAGES, command, java_main_class, source_name  # noqa: E402
from verifier.runner.proxy import MAX_TIMEOUTS  # noqa: E402

ORDER = ("timeout", "error", "failed")


def available(language: str) -> bool:
    """Whether the host has the language's compiler and runtime."""
    lang = LANGUAGES[language]
    needed = [lang.run[0]] if not lang.run[0].startswith("./") else []
    if lang.compile is not None:
        needed.append(lang.compile[0])
    return all(shutil.which(tool) for tool in needed)


def judge(
    language: str,
    source: str,
    cases: list[tuple[str, str]],
    *,
    time_limit_s: float,
    memory_bytes: int,
    compile_timeout_s: float,
    compare_mode: str = "tokens",
) -> str:
    """The status of `source` on `cases`: passed, failed, error, timeout or compile_error."""
    lang = LANGUAGES[language]
    data = source.encode()
    name = source_name(language, data)
    memory_mib = memory_bytes // 1024**2
    with tempfile.TemporaryDirectory(prefix="verifier-plain-") as tmp:
        Path(tmp, name).write_bytes(data)
        env = {**os.environ, **dict(lang.env)}
        env.update({k: v.replace("/tmp/", f"{tmp}/") for k, v in lang.env})
        if lang.compile is not None:
            os.makedirs(Path(tmp, "build"))
            try:
                done = subprocess.run(
                    command(lang.compile, source=name), cwd=tmp, env=env, capture_output=True, timeout=compile_timeout_s
                )
            except subprocess.TimeoutExpired:
                return "compile_error"
            if done.returncode != 0:
                return "compile_error"
        argv = command(lang.run, source=name, memory_mib=memory_mib, main_class=java_main_class(data))
        seen: list[str] = []
        for given, want in cases:
            if seen.count("timeout") >= MAX_TIMEOUTS:
                break
            try:
                run = subprocess.run(
                    argv, cwd=tmp, env=env, input=given.encode(), capture_output=True, timeout=time_limit_s
                )
            except subprocess.TimeoutExpired:
                seen.append("timeout")
                continue
            if run.returncode != 0:
                seen.append("error")
            elif not compare(compare_mode, want.encode(), run.stdout).ok:
                seen.append("failed")
            else:
                seen.append("passed")
    return next((status for status in ORDER if status in seen), "passed")


def main() -> int:
    sys.path.insert(0, str(HERE.parent / "tests" / "programs"))
    import language_corpus as corpus

    for sol in corpus.SOLUTIONS:
        if not available(sol.language):
            print(f"{sol.language:7} {sol.problem:9} {sol.note:16} skipped (no toolchain on this host)")
            continue
        got = judge(
            sol.language,
            sol.source,
            corpus.PROBLEMS[sol.problem],
            time_limit_s=corpus.TIME_LIMIT_S,
            memory_bytes=corpus.MEMORY_BYTES,
            compile_timeout_s=corpus.COMPILE_TIMEOUT_S,
            compare_mode=corpus.COMPARE[sol.problem],
        )
        print(f"{sol.language:7} {sol.problem:9} {sol.note:16} {got:14} expect {sol.expect}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
