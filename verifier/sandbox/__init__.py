"""Sandboxes that run one job in a locked-down container. Nothing here knows about tests."""

from verifier.sandbox.backend import RawRun, SandboxBackend, SandboxJob

__all__ = ["RawRun", "SandboxBackend", "SandboxJob"]
