"""verifier: sandboxed, content-bound verification of model-written code.

The names below are imported on first use (PEP 562), so that a command which needs only a
few of them (the CLI starts its sandboxes first) does not pay for all of them at start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from verifier._distribution import __version__
from verifier.errors import HostOverloaded, ImageNotFound, InvalidInput, SandboxUnavailable, VerifierError

if TYPE_CHECKING:
    from verifier.evidence import (
        Counts,
        Evidence,
        Failure,
        FailureKind,
        Fault,
        Status,
        evidence_json_schema,
        is_verdict,
    )
    from verifier.inputs import Candidate
    from verifier.limits import Limits, PoolConfig
    from verifier.suite import Suite, load_suite
    from verifier.verify import Verifier

#: Public name -> the module that defines it.
_HOMES = {
    **dict.fromkeys(
        ("Counts", "Evidence", "Failure", "FailureKind", "Fault", "Status", "evidence_json_schema", "is_verdict"),
        "verifier.evidence",
    ),
    "Candidate": "verifier.inputs",
    "Limits": "verifier.limits",
    "PoolConfig": "verifier.limits",
    "Suite": "verifier.suite",
    "load_suite": "verifier.suite",
    "Verifier": "verifier.verify",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'verifier' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "Candidate",
    "Counts",
    "Evidence",
    "Failure",
    "FailureKind",
    "Fault",
    "HostOverloaded",
    "ImageNotFound",
    "InvalidInput",
    "Limits",
    "PoolConfig",
    "SandboxUnavailable",
    "Status",
    "Suite",
    "Verifier",
    "VerifierError",
    "__version__",
    "evidence_json_schema",
    "is_verdict",
    "load_suite",
]
