"""verifier: sandboxed, content-bound verification of model-written code."""

from __future__ import annotations

__version__ = "0.1.0"

from verifier.errors import HostOverloaded, ImageNotFound, InvalidInput, SandboxUnavailable, VerifierError
from verifier.evidence import Counts, Evidence, Failure, FailureKind, Fault, Status, evidence_json_schema, is_verdict
from verifier.inputs import Candidate
from verifier.limits import Limits
from verifier.suite import Suite, load_suite
from verifier.verify import Verifier

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
