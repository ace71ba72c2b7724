"""What a run's tests did: counts and failures, recorded by the trusted side only.

Shared by the pytest plugin (pytest_plugin.py) and the direct runner (direct.py); no pytest
import here, so suites that do not use pytest never pay for it. `why_failed` is the one place
that says why a test failed; its summaries come from fixed templates and trusted type names,
never from candidate text (which goes to the untrusted detail).
"""

from __future__ import annotations

import os
import re
import traceback
from dataclasses import dataclass

from .progress import Progress
from .protocol import MAX_DETAIL, MAX_EXAMPLE, MAX_FAILURES, FailureRecord, JobCounts, summary_line
from .proxy import CallAborted, CandidateSession

#: Notes Hypothesis attaches to the exception of a failing example (its own text, from the
#: generated input, written before the test ran), e.g. "Falsifying example: test_f(\n  x=1,\n)";
#: an explicit example (`@example`, as `bench humaneval --plus` runs its inputs) is "Failing
#: explicit example: ..." in Hypothesis 6.1xx.
_EXAMPLE_NOTE = re.compile(
    r"^(?:Falsifying(?: explicit)? example|Failing (?:test case|explicit example)):\s*(.*)$", re.S
)


@dataclass(frozen=True)
class Why:
    kind: str
    summary: str
    falsifying_example: str | None = None


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def falsifying_example(exc: BaseException) -> str | None:
    """Hypothesis' minimal failing input, from the notes it attached, on one line."""
    for holder in (exc, _leaf(exc)):
        for note in getattr(holder, "__notes__", None) or []:
            m = _EXAMPLE_NOTE.match(str(note))
            if m:
                # Hypothesis' own comments ("# or any other generated value", explanations) go;
                # the call stays, on one line.
                lines = [
                    re.sub(r"\s+# .*$", "", ln) for ln in m.group(1).splitlines() if not ln.strip().startswith("#")
                ]
                text = " ".join(ln.strip() for ln in lines if ln.strip())
                text = re.sub(r",? \)$", ")", re.sub(r"^([\w.]+)\( ", r"\1(", text))
                return summary_line(text)[:MAX_EXAMPLE] or None
    return None


def why_failed(exc: BaseException) -> Why:
    """Why a test that raised `exc` failed, from trusted facts only."""
    leaf = _leaf(exc)
    example = falsifying_example(exc)
    if isinstance(leaf, CallAborted):
        if leaf.kind == "import_error":
            return Why("import_error", "the candidate could not be imported", example)
        return Why(leaf.kind, leaf.summary, example)
    mapped = getattr(leaf, "verifier_candidate_raised", None)
    if mapped is not None:
        return Why("exception", f"the candidate raised an exception (seen by the test as {mapped})", example)
    if isinstance(leaf, AssertionError):
        return Why("assertion", "an assertion failed", example)
    return Why("exception", f"the test raised {type(leaf).__name__}", example)


_RUNNER_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def is_runner_frame(filename: str) -> bool:
    """Whether a traceback frame is the verifier's own code (never shown as the test's or the
    candidate's doing)."""
    return os.path.abspath(filename).startswith(_RUNNER_DIR)


def format_detail(exc: BaseException) -> str:
    """A failure's text as pytest would end it: the traceback (the test's frames, not the
    verifier's), then `E   Type: message` lines."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if not is_runner_frame(f.filename)][-4:]
    tb = "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames)) if frames else ""
    notes = getattr(exc, "__notes__", None)
    lines = [f"E   {type(exc).__name__}: {_said(exc)}"] + [
        f"E   {_said(note)}" for note in (notes if isinstance(notes, list) else [])
    ]
    return tb[-MAX_DETAIL:] + "\n" + "\n".join(lines)


def _said(value: object) -> str:
    """`str(value)` for a failure's text, or what stopped it: a candidate exception's args can be
    an int too long for decimal text, or an object whose `__str__` raises (the test failed
    either way; its text must not end the run as the verifier's failure)."""
    try:
        return str(value)
    except BaseException as exc:  # noqa: BLE001 - whatever a candidate's str() raises
        return f"<str() raised {type(exc).__name__}>"


class Results:
    """Counts and failures of one run."""

    def __init__(self, session: CandidateSession, progress: Progress | None = None) -> None:
        self.session = session
        self.progress = progress or Progress()
        self.collected: int | None = None
        self.outcomes: dict[str, str] = {}
        self.failures: list[FailureRecord] = []
        self.failures_total = 0
        self.collect_errors = 0

    def fail(self, test_id: str, why: Why, detail: str, where: str = "") -> None:
        self.failures_total += 1
        if len(self.failures) >= MAX_FAILURES:
            return
        example = why.falsifying_example
        if example is not None and any(text in example for text in self.session.spoken):
            # Hypothesis printed something the candidate said (a repr of an object a strategy
            # built, a string it returned): the example is not trusted text, so it is data.
            why = Why(why.kind, why.summary)
            detail = f"falsifying example (holds the candidate's own text): {example}\n{detail}"
        self.failures.append(
            FailureRecord(
                test_id=test_id,
                kind=why.kind,
                summary=why.summary + where,
                falsifying_example=why.falsifying_example,
                detail_untrusted=detail[-MAX_DETAIL:],
            )
        )

    def collection_failed(self, test_id: str, detail: str, exc: BaseException | None = None) -> None:
        """A test module that could not be collected. When what stopped it is one of our aborts
        (the run's time ran out while the module imported the candidate, the host was too busy,
        the sandbox failed), the failure is that fact, as it would be inside a test: a busy host
        must not turn into "the suite could not be collected"."""
        self.collect_errors += 1
        blocked = self.session.blocked
        if exc is not None and isinstance(_leaf(exc), CallAborted):
            why = why_failed(exc)
        elif blocked is not None and blocked.kind == "import_error":
            why = Why("import_error", "the candidate could not be imported")
        elif blocked is not None:
            why = Why(blocked.kind, blocked.summary)
        else:
            why = Why("collection_error", "the suite could not be collected")
        self.fail(test_id, why, detail)

    def skipped(self, test_id: str, detail: str) -> None:
        self.fail(test_id, Why("skipped", "the test was skipped or xfailed, which never counts as a pass"), detail)

    def counts(self) -> JobCounts:
        values = list(self.outcomes.values())
        return JobCounts(
            expected=self.collected or 0,
            passed=values.count("passed"),
            failed=values.count("failed"),
            errors=values.count("error") + self.collect_errors,
            skipped=values.count("skipped"),
        )

    @property
    def kinds(self) -> set[str]:
        return {f.kind for f in self.failures}
