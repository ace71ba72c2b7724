"""verifier: sandboxed, content-bound verification of model-written code."""

from __future__ import annotations

__version__ = "0.1.0"

from verifier.errors import ImageNotFound, InvalidInput, SandboxUnavailable, VerifierError
from verifier.evidence import Counts, Evidence, Failure, FailureKind, Status, evidence_json_schema
from verifier.limits import Limits
from verifier.suite import Suite, load_suite
from verifier.verify import Verifier

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
