"""Exceptions raised by verifier.

The tree::

    VerifierError                 catch this for everything verifier raises
      + InvalidInput              the caller's input is unusable (bad candidate, bad suite)
      + SandboxUnavailable        the sandbox could not run at all (no engine, no image)
        - ImageNotFound           the sandbox image for this recipe is not built

A *verdict* is never an exception: a candidate that fails, hangs or crashes yields an
`Evidence` with ``ok: false``. These exceptions mean "no verdict could be produced",
and `Verifier.check` turns them into fail-closed evidence at one place.
"""

from __future__ import annotations


class VerifierError(Exception):
    """Base class of every exception verifier raises."""


class InvalidInput(VerifierError):
    """The candidate or suite given by the caller cannot be verified as it is."""


class SandboxUnavailable(VerifierError):
    """The sandbox could not run (engine not answering, container failed to start, ...)."""


class ImageNotFound(SandboxUnavailable):
    """The sandbox image for the current recipe is not built."""
