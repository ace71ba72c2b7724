"""verifier: sandboxed, content-bound verification of model-written code."""

from __future__ import annotations

__version__ = "0.1.0"

from verifier.errors import ImageNotFound, InvalidInput, SandboxUnavailable, VerifierError  # noqa: E402
from verifier.evidence import Counts, Evidence, Failure, FailureKind, Status, evidence_json_schema  # noqa: E402
from verifier.limits import Limits  # noqa: E402
from verifier.suite import Suite, load_suite  # noqa: E402
from verifier.verify import Verifier  # noqa: E402

__all__ = [
    "Counts",
    "Evidence",
    "Failure",
    "FailureKind",
    "ImageNotFound",
    "InvalidInput",
    "Limits",
    "SandboxUnavailable",
    "Status",
    "Suite",
    "Verifier",
    "VerifierError",
    "__version__",
    "evidence_json_schema",
    "load_suite",
]
