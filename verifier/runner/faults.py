"""Trusted side: the verifier's own aborts, one home for every way a call cannot end normally.

Every class here is a `CallAborted`, a BaseException: a suite's ``pytest.raises(Exception)``,
``except Exception``, ``pytest.raises(TypeError)`` or a Hypothesis ``assume`` behind an
``except`` cannot take one for the candidate's behaviour. A crash, a refusal (comparing a
candidate object) or a control-flow exception the candidate raised never passes for an
expected error: it fails the test that met it, with a trusted `summary`.

Every abort carries a `summary` written from fixed templates and numbers (shown to graders and
terminals as a trusted line) and a `detail` that may hold candidate text.
"""

from __future__ import annotations

from .protocol import summary_line


class CallAborted(BaseException):
    """A call into the candidate that could not end with a value or an ordinary exception."""

    kind = "candidate_died"

    def __init__(self, summary: str, detail: str = "") -> None:
        # str() (what pytest shows in the failure's text) carries the detail; `summary` alone
        # is the trusted line.
        super().__init__(f"{summary}\n{detail}" if detail else summary)
        self.summary = summary_line(summary)
        self.detail = detail


class CandidateDied(CallAborted):
    """The candidate's process ended during a call (a crash, a signal, `os._exit`) or broke the
    call protocol."""

    kind = "candidate_died"


class CandidateTimeout(CallAborted):
    """A call did not answer within its time: the call's own limit or what was left of the run's."""

    kind = "timeout"


class CandidateOOM(CallAborted):
    """The candidate's process was killed for running out of its memory limit during a call."""

    kind = "oom"


class CandidateOutputLimit(CallAborted):
    """The candidate wrote more output than its limit, or its answer was over the reply's byte
    limit."""

    kind = "output_limit"


class NotPlainData(CallAborted):
    """Something that must cross as plain data (an answer, an argument) could not."""

    kind = "not_plain_data"


class CandidateImportError(CallAborted):
    """Importing the candidate's module failed: every later call meets this instead."""

    kind = "import_error"


class OverloadAbort(CallAborted):
    """Not the candidate's doing: the host kept the sandbox waiting for a CPU past the backstop,
    so the call was aborted (in the sandbox; the host's own refusal is `errors.HostOverloaded`)."""

    kind = "overloaded"


class StaleHandle(CallAborted):
    """A test used a candidate object after the process that made it was gone."""

    kind = "not_plain_data"


class HandleRefused(CallAborted):
    """A test asked a candidate object something only the candidate could answer and a
    candidate could always answer in its own favour (``==``, ordering): refused, never
    forwarded, and never an ordinary exception a test could expect."""

    kind = "not_plain_data"


class ControlFlowEscaped(CallAborted):
    """The candidate raised an exception that steers control flow in the caller
    (``StopIteration`` outside ``next()``, ``GeneratorExit``, ``SystemExit``,
    ``KeyboardInterrupt``, any other BaseException): it never crosses as itself (as PEP 479
    turns a generator's ``StopIteration`` into a ``RuntimeError``), so it cannot end a test's
    ``all(map(...))`` early or its run."""

    kind = "exception"


class SandboxFailure(CallAborted):
    """Not the candidate's doing: the candidate side of the sandbox stopped working."""

    kind = "infra"


# Shown in a failure's text as `verifier.CandidateTimeout: ...`: the verifier's word, not a path
# into its internals.
for _fault in (CallAborted, *CallAborted.__subclasses__()):
    _fault.__module__ = "verifier"
