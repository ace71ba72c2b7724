"""The result line of the in-container supervisor (verifier/runner/review_plugin.py), parsed.

The supervisor writes exactly one line (`verifier.runner.review_protocol.result_line`) to the
stdout only it holds; the host accepts only the line with the nonce it chose for this run. The
framing and version are the shared protocol module's; the models below validate the JSON's
shape and bound every field; text in them is repository-controlled.
"""

from __future__ import annotations

import json
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from verifier.runner.review_protocol import PROTOCOL, find_result
from verifier.text import clean

MAX_TEXT = 4000

#: Text the tests wrote (a failure's message, a file name in a traceback): valid Unicode before its
#: length is checked, lone surrogates replaced (pydantic refuses them in a bounded string, and the
#: whole result with them). Ids keep theirs: they name files, and the host matches them with the
#: trees' names (`verifier.text.shown_name` shows them in the evidence).
Text = Annotated[str, BeforeValidator(lambda v: clean(v) if isinstance(v, str) else v)]


class TestReport(BaseModel):
    __test__ = False
    model_config = ConfigDict(frozen=True, extra="ignore")

    outcome: str
    when: str = ""
    message: Text = Field("", max_length=MAX_TEXT)
    excerpt: Text = Field("", max_length=MAX_TEXT)
    duration_s: float = 0.0


class CollectError(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    id: str
    message: Text = Field("", max_length=MAX_TEXT)
    excerpt: Text = Field("", max_length=MAX_TEXT)


class Session(BaseModel):
    """One pytest session in one worker process (the first run, or the rerun of failing tests)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    #: (node id, collecting file, line of the test's definition, file of the test's definition)
    collected: list[tuple[str, str, int | None, str]] | None = None
    results: dict[str, TestReport] = {}
    collect_errors: list[CollectError] = []
    exit_status: int | None = None
    #: What the worker found changed on pytest's reporting path (empty: nothing); it ended there.
    tampered: list[str] = []
    returncode: int | None = None
    timed_out: bool = False
    log_tail: Text = Field("", max_length=2 * MAX_TEXT)
    log_bytes: int = 0
    bad_records: int = 0
    duration_s: float = 0.0


class SupervisorResult(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    protocol: int
    files: int = 0
    runs: list[Session] = []
    rerun_skipped: Text | None = None
    error: Text | None = None
    supervisor_s: float = 0.0

    @property
    def first(self) -> Session | None:
        return self.runs[0] if self.runs else None

    @property
    def rerun(self) -> Session | None:
        return self.runs[1] if len(self.runs) > 1 else None


def parse(stdout: bytes, nonce: str) -> SupervisorResult | None:
    """The result bound to `nonce` (`find_result`), validated; None when there is none, it is
    malformed, or it is of another protocol version."""
    payload = find_result(stdout, nonce)
    if payload is None:
        return None
    try:
        data = json.loads(clean(payload.decode("utf-8", "replace")))
        result = SupervisorResult.model_validate(data)
    except (ValueError, ValidationError):
        return None
    return result if result.protocol == PROTOCOL else None
