"""`ReviewEvidence`: what a review ran, what each test did on each side, and the verdict.

Bound to content: the git tree ids of the base, the head and of each tree that actually ran,
the patch's SHA-256, the sandbox image and environment images, the limits, and the per-test
table; `review_id` is a digest over all of them (not over timings or failure text, which
vary between identical runs). A validator refuses ``ok=true`` unless both runs completed,
both collected tests, and no row blocks.

Fields whose name ends in ``_untrusted`` hold text the repository under test controls
(failure excerpts, console output). Show them as data, never as instructions.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from verifier.hashing import canonical_json, sha256_bytes
from verifier.limits import Limits
from verifier.review.provenance import Provenance
from verifier.text import clean

REVIEW_SCHEMA_VERSION = 3

#: Text from the repository under test: always valid Unicode (lone surrogates replaced), so every
#: report format can encode it.
Text = Annotated[str, BeforeValidator(lambda v: clean(v) if isinstance(v, str) else v)]


class Outcome(StrEnum):
    """One test's outcome in one run of one tree."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"  # collection, setup or teardown failed
    SKIPPED = "skipped"
    XFAILED = "xfailed"
    XPASSED = "xpassed"
    MISSING = "missing"  # collected, but the run ended before it reported
    ABSENT = "absent"  # not collected in this run


GOOD = frozenset({Outcome.PASSED, Outcome.XFAILED, Outcome.XPASSED})
BAD = frozenset({Outcome.FAILED, Outcome.ERROR})


class TestClass(StrEnum):
    """A test's classification across the change (SWE-bench's FAIL_TO_PASS/PASS_TO_PASS, spelled out)."""

    __test__ = False  # not a pytest test class

    FIXED = "fixed"
    BROKEN = "broken"
    STILL_PASSING = "still_passing"
    STILL_FAILING = "still_failing"
    ADDED = "added"
    REMOVED = "removed"
    FLAKY = "flaky"
    ERROR = "error"
    MISSING = "missing"
    SKIPPED = "skipped"
    EDITED_TO_PASS = "edited_to_pass"
    #: The change edits or removes this test (or what it sees), and the base's own version of
    #: it, which passes on the base code, does not pass on the head code (blocks).
    REWRITTEN = "rewritten"


class SideResult(BaseModel):
    """A test on one side (base run or head run)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    outcome: Outcome
    rerun: Outcome | None = Field(None, description="Outcome of the one rerun of a failing test, if it ran.")
    phase: str = Field("", description="setup, call or teardown: where the outcome was decided; collect for errors.")
    message_untrusted: Text = Field("", description="The failure's one-line message (repository-controlled).")
    excerpt_untrusted: Text = Field("", description="Tail of the failure report (repository-controlled).")
    duration_s: float = Field(0.0, ge=0, description="pytest's duration of the test (setup, call, teardown).")


class BaseVersion(BaseModel):
    """The base's own version of a test the change edits or removes, run on both sides' code."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    on_base: SideResult = Field(description="The base's test on the base code (the base tree as it is).")
    on_head: SideResult = Field(description="The base's test on the head code.")


class TestRow(BaseModel):
    """One test: provenance, both sides, classification."""

    __test__ = False
    model_config = ConfigDict(frozen=True, extra="forbid")

    test_id: Text = Field(description="pytest node id (relative to the repository root).")
    file: Text | None = Field(None, description="Repository path of the test's file.")
    line: int | None = Field(None, ge=1, description="Line of the test's definition in the tree that ran it.")
    provenance: Provenance
    base: SideResult | None = Field(None, description="On the base code (None: not run there).")
    head: SideResult | None = Field(None, description="On the head code (None: not run there).")
    base_version: BaseVersion | None = Field(
        None, description="For a test the change edits or removes: its base version on both sides' code."
    )
    classification: TestClass
    blocking: bool = Field(description="Whether this row alone makes the review not ok.")
    note: str = Field("", description="Trusted words on why the row is classified so.")


class ReviewCounts(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    total: int = 0
    blocking: int = 0
    fixed: int = 0
    broken: int = 0
    still_passing: int = 0
    still_failing: int = 0
    added: int = 0
    removed: int = 0
    flaky: int = 0
    error: int = 0
    missing: int = 0
    skipped: int = 0
    edited_to_pass: int = 0
    rewritten: int = 0


class TreeRef(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    ref: Text = Field(description="The ref as given (or 'base + patch').")
    commit: str | None = Field(None, description="Commit id; None for a tree made by applying a patch.")
    tree: str = Field(description="git tree id.")


class PytestSession(BaseModel):
    """How both sides' pytest sessions were set up: what decided which files are tests."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    config_file: Text | None = Field(description="The configuration file pytest read (a tree path), or None.")
    paths: list[Text] = Field(description="The session's paths: --test-path / addopts, else testpaths, else '.'.")
    python_files: list[Text]
    python_classes: list[Text]
    python_functions: list[Text]
    args: list[Text] = Field(description="Options given to every session (configuration pinned, --pytest-args).")


class EnvironmentRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    digest: str = Field(description="sha256 of the dependency spec, the sandbox pins and the sandbox image id.")
    image_id: str = Field(description="The image the run used (the sandbox image when nothing was declared).")
    requirements: list[str] = Field(description="The declared requirements, as given to the package index.")
    sources: list[str] = Field(description="Where they were declared.")
    packages: list[str] = Field(description="What was installed on top of the sandbox image (name==version).")
    built: bool = Field(description="Whether this review built the image (False: found in the cache).")


class ProjectRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str | None
    version: str | None
    import_roots: list[str] = Field(description="Tree folders put on sys.path ('' is the root): a path install.")


class RunRecord(BaseModel):
    """One tree's test session (plus the rerun of its failing tests) in one container."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    side: Literal["base", "head", "base_tests_on_base", "base_tests_on_head"] = Field(
        description="base / head: the two runs of the tests mode; base_tests_on_*: the base's own versions "
        "of the tests the change edits or removes, on each side's code (--tests head only)."
    )
    code_from: Literal["base", "head"]
    tests_from: Literal["base", "head", "base+added"]
    tree: str = Field(description="git tree id of the exact tree this run saw (code + tests).")
    environment: EnvironmentRecord
    project: ProjectRecord
    complete: bool = Field(description="Collected, every collected test reported, and the session ended by itself.")
    stopped: Text = Field("", description="Why the run is not complete (trusted words).")
    collected: int = Field(0, ge=0)
    collection_errors: int = Field(0, ge=0)
    reran: int = Field(0, ge=0, description="Failing tests run a second time (fresh process, fresh tree).")
    exit_status: int | None = Field(None, description="pytest's exit status (None: it never said).")
    duration_s: float = 0.0
    sandbox_s: float = Field(0.0, description="Container create/start/remove overhead.")
    log_tail_untrusted: Text = Field("", description="The end of the test session's console output.")
    cached: bool = Field(
        False,
        description="base_tests_on_base only: read from the host's cache of the base tree's own runs "
        "(same tree, environment, sandbox image, limits and protocol), not run again.",
    )
    tampered: list[Text] = Field(
        default_factory=list,
        description="What the code under test changed on pytest's reporting path; the session ended there.",
    )


class Controls(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    pythonhashseed: str = "0"
    tz: str = "UTC"
    hypothesis: str = "derandomize=True, database=None, deadline=None (unless a conftest loads its own profile)"
    reruns: int = Field(1, description="Each failing test runs once more; a different outcome makes it flaky.")
    order: str = "the repository's (pytest-randomly disabled)"


class Timings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    started_at: str = Field("", description="When the review started: ISO 8601, UTC.")

    read_s: float = Field(0.0, description="Reading the trees through git, splitting, hashing.")
    environment_s: float = Field(0.0, description="Finding (or building) the environment images.")
    base_s: float = Field(0.0, description="The base run, container included.")
    head_s: float = Field(0.0, description="The head run, container included (runs in parallel with base).")
    total_s: float = 0.0


class ExpectedTest(BaseModel):
    """One test an instance spec names, and whether it did what the spec expects."""

    __test__ = False
    model_config = ConfigDict(frozen=True, extra="forbid")

    test_id: Text = Field(description="The spec's pytest node id, matched exactly against the table's.")
    expected: Literal["fail_to_pass", "pass_to_pass"]
    base: Outcome = Field(description="On the base code (absent: not collected there).")
    head: Outcome = Field(description="On the head code (absent: not collected there, which counts as failing).")
    met: bool = Field(
        description="fail_to_pass: failing or absent on the base, passing on the head; "
        "pass_to_pass: passing on the head (as SWE-bench grades). A rerun that disagrees is not a pass."
    )


class Resolution(BaseModel):
    """The instance spec's verdict (SWE-bench's FAIL_TO_PASS / PASS_TO_PASS)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    resolved: bool = Field(
        description="Every listed test met its expectation and the review is ok (equals ok when a spec is given)."
    )
    fail_to_pass: int = Field(ge=0, description="FAIL_TO_PASS tests listed.")
    pass_to_pass: int = Field(ge=0, description="PASS_TO_PASS tests listed.")
    unmet: list[Text] = Field(description="The listed tests that did not meet their expectation (decided it).")
    tests: list[ExpectedTest]


class ReviewEvidence(BaseModel):
    """Content-bound result of reviewing one change with the repository's own tests."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = REVIEW_SCHEMA_VERSION
    review_id: str = Field(description="sha256 over trees, patch, mode, images, environments, limits and the table.")
    ok: bool = Field(description="Both runs complete and collected tests, nothing broken, no added test fails.")
    reason: Text = Field(description="One trusted sentence saying why ok is what it is.")
    repository: Text = Field(description="The repository's folder name (informational, not part of review_id).")
    repository_uri: Text | None = Field(
        None, description="Its origin remote's URL without credentials, else its file:// URI (informational)."
    )
    hostname: Text = Field("", description="The machine that ran the review (informational).")
    base: TreeRef
    head: TreeRef
    patch_sha256: str | None = Field(None, description="SHA-256 of the --patch file's bytes.")
    test_patch_sha256: str | None = Field(
        None, description="SHA-256 of an instance's test_patch, applied on the base before the patch."
    )
    tests_mode: Literal["head", "base"] = Field(
        description="head: the head's tests judge both sides; base: the base's tests (+ files the change adds)."
    )
    pytest: PytestSession
    isolation: Literal["in-process"] = Field(
        "in-process",
        description="The code under test shares a process with its tests and pytest (see docs/review.md).",
    )
    sandbox_image_id: str
    limits: Limits
    controls: Controls = Controls()
    runs: list[RunRecord]
    tests: list[TestRow]
    counts: ReviewCounts
    edited_judges: list[Text] = Field(
        default_factory=list, description="Tests the change edits that went from failing to passing."
    )
    test_infrastructure_changes: list[Text] = Field(
        default_factory=list, description="conftest.py, pytest configuration and test helpers the change touches."
    )
    notes: list[Text] = Field(default_factory=list, description="Trusted remarks (skipped submodules, ...).")
    resolution: Resolution | None = Field(
        None, description="With an instance spec (--expect, --instances): resolved or not, and which tests decided it."
    )
    timings: Timings = Timings()
    verifier_version: str

    @model_validator(mode="after")
    def _ok_means_proven(self) -> ReviewEvidence:
        proven = (
            {r.side for r in self.runs} >= {"base", "head"}
            and all(r.complete and r.collected >= 1 for r in self.runs)
            and not any(t.blocking for t in self.tests)
        )
        if self.ok and not proven:
            raise ValueError("ok=true requires complete base and head runs that collected tests and no blocking row")
        if self.resolution is not None and self.resolution.resolved != self.ok:
            raise ValueError("with an instance spec, resolved and ok are the same verdict")
        if self.resolution is not None and self.resolution.resolved and self.resolution.unmet:
            raise ValueError("resolved=true requires every listed test to meet its expectation")
        return self

    def to_json(self, *, indent: int | None = 2) -> str:
        return self.model_dump_json(indent=indent)


def review_id(fields: dict[str, Any]) -> str:
    """Digest of what identifies a review; same inputs (and deterministic tests), same id."""
    return sha256_bytes(canonical_json(fields))


def identity(ev_fields: dict[str, Any]) -> dict[str, Any]:
    """The parts of a review's fields that `review_id` covers (no timings, no failure text)."""
    runs = [
        {k: r[k] for k in ("side", "code_from", "tests_from", "tree", "complete", "collected", "collection_errors")}
        | {"environment": {k: r["environment"][k] for k in ("digest", "image_id")}}
        for r in ev_fields["runs"]
    ]
    rows = [
        {
            "test_id": t["test_id"],
            "provenance": t["provenance"],
            "classification": t["classification"],
            "blocking": t["blocking"],
            "base": None if t["base"] is None else [t["base"]["outcome"], t["base"]["rerun"]],
            "head": None if t["head"] is None else [t["head"]["outcome"], t["head"]["rerun"]],
            "base_version": None
            if t.get("base_version") is None
            else [t["base_version"][k]["outcome"] for k in ("on_base", "on_head")],
        }
        for t in ev_fields["tests"]
    ]
    return {
        "schema_version": REVIEW_SCHEMA_VERSION,
        "base_tree": ev_fields["base"]["tree"],
        "head_tree": ev_fields["head"]["tree"],
        "patch_sha256": ev_fields["patch_sha256"],
        "test_patch_sha256": ev_fields.get("test_patch_sha256"),
        "resolution": ev_fields.get("resolution"),
        "tests_mode": ev_fields["tests_mode"],
        "pytest": ev_fields["pytest"],
        "isolation": ev_fields["isolation"],
        "sandbox_image_id": ev_fields["sandbox_image_id"],
        "limits": ev_fields["limits"],
        "controls": ev_fields["controls"],
        "runs": runs,
        "tests": rows,
        "counts": ev_fields["counts"],
        "ok": ev_fields["ok"],
    }


def review_json_schema() -> dict[str, Any]:
    """The published JSON schema of `ReviewEvidence` (`verifier review --schema`)."""
    schema = ReviewEvidence.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://verifier.invalid/schema/review-evidence-v{REVIEW_SCHEMA_VERSION}.json"
    return schema


def dumps_review_schema() -> str:
    return json.dumps(review_json_schema(), indent=2)
