"""The direct runner: import each test file and call its `test_*` functions in order.

For suites that declare `runner = "direct"`: plain functions without fixtures, marks or
parametrisation (HumanEval's check()). Same trusted process, same candidate boundary, no
pytest start-up cost. Anything it cannot run as such is an error, never a pass.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import warnings
from types import CodeType
from typing import Any

from .protocol import SUITE_DIR
from .results import Results, format_detail, why_failed
from .suite_files import is_test_file

#: Test files up to this size keep their compiled code (`_compiled`): at most 256 of them.
CACHED_SOURCE_BYTES = 64 * 1024


def _compile(source: bytes, path: str) -> CodeType:
    """A test file's code, as its import would compile it (`dont_inherit`, as importlib does)."""
    return compile(source, path, "exec", dont_inherit=True)


#: Kept by content: a server that runs many jobs in itself (trusted_process = "shared")
#: compiles a suite's file once, not for every sample of that problem. Code objects are
#: immutable; the module still runs afresh every job.
_compiled = functools.lru_cache(maxsize=256)(_compile)


def run(recorder: Results) -> int:
    tests: list[tuple[str, Any]] = []
    for rel in sorted(os.listdir(SUITE_DIR)):
        if not is_test_file(rel):
            continue
        path = os.path.join(SUITE_DIR, rel)
        spec = importlib.util.spec_from_file_location(f"verifier_suite_{rel[:-3]}", path)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        try:
            with open(path, "rb") as fh:
                source = fh.read()
            code = (_compiled if len(source) <= CACHED_SOURCE_BYTES else _compile)(source, path)
            exec(code, module.__dict__)  # what the loader's exec_module does with it
        except BaseException as exc:  # noqa: BLE001 - a module that fails to import is a collection error
            recorder.collection_failed(rel, format_detail(exc), exc)
            continue
        for name, fn in vars(module).items():
            if name.startswith("test") and callable(fn) and getattr(fn, "__module__", None) == module.__name__:
                tests.append((f"{rel}::{name}", fn))
    recorder.collected = len(tests)
    recorder.progress.collected(len(tests))
    for nodeid, fn in tests:
        try:
            recorder.session.begin_test()
            # Warnings (the candidate's, issued again here) are recorded and dropped, as pytest's
            # capture would: nothing of a test reaches the server's stderr or stays in its filters.
            with warnings.catch_warnings(record=True):
                fn()
        except BaseException as exc:  # noqa: BLE001 - every way a test ends is recorded
            recorder.outcomes[nodeid] = "failed"
            recorder.fail(nodeid, why_failed(exc), format_detail(exc))
        else:
            recorder.outcomes[nodeid] = "passed"
        recorder.progress.one_done()
    return 0 if tests and not recorder.failures_total else 1
