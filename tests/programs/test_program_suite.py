"""Program suites on the host: suite.toml's kind and [program], validated when the suite loads;
the job the Verifier sends; the protocol's program fields; the verdict on a program's cases."""

from __future__ import annotations

import io
import json
import typing
from pathlib import Path
from typing import Any

import pytest

from verifier import Verifier
from verifier.errors import InvalidInput
from verifier.evidence import CaseOutcome, Evidence, Status
from verifier.limits import DEFAULT_MEMORY_BYTES, Limits
from verifier.runner import protocol
from verifier.runner.protocol import (
    CaseRecord,
    FailureRecord,
    JobConfig,
    JobCounts,
    JobResult,
    ProgramConfig,
    ProtocolError,
    encode_job,
    format_result_line,
    parse_result,
    read_job,
)
from verifier.sandbox.backend import SandboxJob
from verifier.sandbox.fake import FakeBackend, raw_run
from verifier.suite import PROGRAM_MEMORY_RESERVE, Manifest, ProgramManifest, load_suite, parse_manifest
from verifier.verdict import CASE_STATUS, judge

MiB = 1024**2


def write_suite(root: Path, toml: str, cases: dict[str, str] | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "suite.toml").write_text(toml)
    for name, text in (cases if cases is not None else {"1.in": "1 2\n", "1.out": "3\n"}).items():
        path = root / name if "/" in name or name.endswith(".jsonl") or name.endswith(".py") else root / "cases" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


# -- vocabularies ----------------------------------------------------------------------------
def test_program_vocabularies_agree_on_both_sides() -> None:
    assert typing.get_args(Manifest.model_fields["kind"].annotation) == protocol.KINDS
    assert typing.get_args(ProgramManifest.model_fields["compare"].annotation) == protocol.COMPARE_MODES
    assert set(CASE_STATUS) == set(protocol.CASE_OUTCOMES)
    assert set(protocol.CASE_OUTCOMES) - {"passed"} <= set(protocol.FAILURE_KINDS)
    # Two settings the manifest leaves unset, to be derived (ProgramManifest.config): the language
    # (the suite's, else the candidate's extension, else python) and the compile step's memory
    # (what the sandbox has left after the program's reserve). Every other default is the same.
    derived = {"language", "compile_memory_bytes"}
    manifest = {k: v.default for k, v in ProgramManifest.model_fields.items() if k not in derived}
    assert manifest == {k: getattr(ProgramConfig(), k) for k in manifest}  # same defaults on both sides
    assert all(ProgramManifest.model_fields[k].default is None for k in derived)
    assert ProgramManifest().config().language == ProgramConfig().language == "python"


# -- the manifest ------------------------------------------------------------------------------
def test_a_program_manifest() -> None:
    m = parse_manifest(b'kind = "program"\n[program]\ncompare = "float"\nabs_tol = 1e-3\ntime_limit_s = 0.5\n')
    assert m.kind == "program" and m.program is not None
    assert (m.program.compare, m.program.abs_tol, m.program.time_limit_s) == ("float", 1e-3, 0.5)
    assert parse_manifest(b'kind = "program"\n').program == ProgramManifest()  # defaults
    assert parse_manifest(b"").kind == "tests" and parse_manifest(b"").program is None


@pytest.mark.parametrize(
    ("toml", "error"),
    [
        (b"[program]\n", "a [program] table needs kind = 'program'"),
        (b'kind = "programs"\n', "kind"),
        (b'kind = "program"\n[program]\ntimelimit = 1\n', "unknown key 'program.timelimit'; allowed: cases, compare"),
        (b'kind = "program"\n[program]\ncompare = "fuzzy"\n', "compare"),
        (b'kind = "program"\n[program]\ncompare = "checker"\n', "name the checker file exactly when"),
        (b'kind = "program"\n[program]\nchecker = "c.py"\n', "name the checker file exactly when"),
        (b'kind = "program"\n[program]\ntime_limit_s = 0\n', "time_limit_s"),
        (b'kind = "program"\n[program]\nmemory_bytes = 1024\n', "memory_bytes"),
        (b'kind = "program"\n[program]\nabs_tol = -1.0\n', "abs_tol"),
        (b'kind = "program"\n[program]\nrel_tol = nan\n', "rel_tol"),
        (b'kind = "program"\n[program]\nfetch_files = ["a.txt"]\n', "fetch_files: only with compare = 'none'"),
        (b'kind = "program"\n[program]\ncompare = "none"\nfetch_files = ["/etc/passwd"]\n', "an absolute path"),
        (b'kind = "program"\n[program]\ncompare = "none"\nfetch_files = ["a/../b"]\n', "'..' component"),
        (b'kind = "program"\n[program]\ncompare = "none"\nfetch_files = ["a", "a"]\n', "a path named twice"),
        (b'kind = "program"\n[program]\ncompare = "none"\nfetch_files = ["' + b"x" * 256 + b'"]\n', "longer than 255"),
    ],
)
def test_bad_program_manifests_name_the_key(toml: bytes, error: str) -> None:
    with pytest.raises(InvalidInput, match=error.replace("[", r"\[").replace("(", r"\(")):
        parse_manifest(toml, "suite.toml")


def test_a_program_suite_loads_without_test_files(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "s", 'kind = "program"\n'))
    assert suite.kind == "program" and suite.test_files == [] and not suite.uses_hypothesis


@pytest.mark.parametrize(
    ("toml", "cases", "error"),
    [
        ('kind = "program"\n', {}, "holds no case"),
        ('kind = "program"\n', {"1.in": ""}, "cases/1.in has no cases/1.out"),
        ('kind = "program"\n[program]\ncases = "c.jsonl"\n', {}, "c.jsonl is not in the suite"),
        (
            'kind = "program"\n[program]\ncompare = "checker"\nchecker = "check.py"\n',
            {"1.in": "", "1.out": ""},
            "check.py is not in the suite",
        ),
        (
            'kind = "program"\n[program]\ncompare = "checker"\nchecker = "check.py"\n',
            {"1.in": "", "1.out": "", "check.py": "def judge(a, b, c): pass\n"},
            "must define check",
        ),
    ],
)
def test_unusable_cases_are_invalid_input_with_the_suites_digest(
    tmp_path: Path, toml: str, cases: dict[str, str], error: str
) -> None:
    with pytest.raises(InvalidInput, match=error) as info:
        load_suite(write_suite(tmp_path / "s", toml, cases))
    assert info.value.sha256 and len(info.value.sha256) == 64


def test_the_case_memory_must_leave_room_for_the_trusted_side(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "s", 'kind = "program"\n[program]\nmemory_bytes = 450000000\n'))
    with pytest.raises(ValueError, match="must leave 128 MiB"):
        suite.limits(Limits())
    assert suite.limits(Limits(memory_bytes=1024 * MiB)).memory_bytes == 1024 * MiB
    ev = Verifier(backend=FakeBackend(lambda job: raw_run()), image="x").check("print(1)\n", suite)
    assert ev.status is Status.INVALID_INPUT and "memory_bytes" in ev.reason


def test_the_job_carries_the_program_settings(tmp_path: Path) -> None:
    jobs: list[SandboxJob] = []
    suite = load_suite(write_suite(tmp_path / "s", 'kind = "program"\n[program]\ncompare = "exact"\n'))
    Verifier(backend=FakeBackend(lambda job: jobs.append(job) or raw_run()), image="x").check("print(3)\n", suite)
    header, candidate, files = read_job(io.BytesIO(jobs[0].stdin))  # type: ignore[misc]
    assert header.config.kind == "program"
    # the compile step's memory is derived from the sandbox's (512 MiB by default, less the reserve)
    derived = DEFAULT_MEMORY_BYTES - PROGRAM_MEMORY_RESERVE
    assert header.config.program == ProgramConfig(compare="exact", compile_memory_bytes=derived)
    assert candidate == {"solution.py": b"print(3)\n"} and files["cases/1.in"] == b"1 2\n"
    assert "pytest" not in jobs[0].command[-1]  # nothing to pre-import for a program


def test_a_program_config_round_trips() -> None:
    program = ProgramConfig(cases="c.jsonl", compare="checker", checker="x.py", time_limit_s=0.25)
    config = JobConfig(
        budget_s=5, call_timeout_s=1, output_bytes=1024, reply_bytes=65536, kind="program", program=program
    )
    header, _, _ = read_job(io.BytesIO(encode_job("n", ["solution"], {"solution.py": b""}, {}, config)))  # type: ignore[misc]
    assert header.config == config and isinstance(header.config.program, ProgramConfig)


# -- results and verdicts ----------------------------------------------------------------------------
NONCE = "n0nce"


def case(name: str, outcome: str = "passed", **extra: Any) -> CaseRecord:
    return CaseRecord(name=name, outcome=outcome, summary=f"a {outcome}", **extra)


def result_line(cases: list[CaseRecord], nonce: str = NONCE, **fields: Any) -> bytes:
    failed = [c for c in cases if c.outcome != "passed"]
    base: dict[str, Any] = {
        "runner": "pytest",
        "exit_code": int(bool(failed)),
        "counts": JobCounts(expected=len(cases), passed=len(cases) - len(failed), failed=len(failed)),
        "failures": [FailureRecord(test_id=f"case {c.name}", kind=c.outcome, summary=c.summary) for c in failed],
        "failures_total": len(failed),
        "kind": "program",
        "cases": cases,
    }
    return format_result_line(nonce, False, JobResult(**{**base, **fields}))


@pytest.mark.parametrize(
    ("outcomes", "status", "reason"),
    [
        (["passed", "passed"], Status.PASSED, "all 2 cases passed"),
        (["passed", "wrong_answer"], Status.FAILED, "1 of 2 cases passed"),
        (["wrong_answer", "runtime_error"], Status.ERROR, "the program ended with an error; 0 of 2 cases passed"),
        (["runtime_error", "timeout"], Status.TIMEOUT, "exceeded a time limit"),
        (["timeout", "oom"], Status.OOM, "ran out of memory"),
        (["wrong_answer", "output_limit"], Status.OUTPUT_LIMIT, "more output"),
        (["passed", "overloaded"], Status.OVERLOADED, "too busy"),
        # a wrong answer is wrong however busy the host was
        (["overloaded", "wrong_answer"], Status.FAILED, "0 of 2 cases passed"),
        (["passed", "infra"], Status.INFRA_ERROR, "sandbox failed"),
    ],
)
def test_the_verdict_on_a_programs_cases(outcomes: list[str], status: Status, reason: str) -> None:
    cases = [case(str(i), o) for i, o in enumerate(outcomes, start=1)]
    verdict = judge(raw_run(result_line(cases)), NONCE, 1024)
    assert verdict.status is status and reason in verdict.reason
    assert [c.status for c in verdict.cases] == [CASE_STATUS[o] for o in outcomes]


def test_case_outcomes_reach_the_evidence_with_their_first_difference() -> None:
    wrong = case(
        "2",
        "wrong_answer",
        line=3,
        output_line=4,
        expected_line="42",
        got_line_untrusted="41\x1b[2J",
        memory_bytes=13 * MiB,
        exit_code=0,
    )
    ended = case("3", "wrong_answer", line=2, output_line=2, expected_line="7")
    killed = case("4", "runtime_error", signal=11)
    cases = [case("1"), wrong, ended, killed]

    def answer(job: SandboxJob) -> Any:
        return raw_run(result_line(cases, nonce=json.loads(job.stdin.split(b"\n")[0])["nonce"]))

    ev = Verifier(backend=FakeBackend(answer), image="x").check("print(1)\n", _suite())
    assert ev.kind == "program" and ev.status is Status.ERROR and not ev.ok
    assert [c.status for c in ev.cases] == [Status.PASSED, Status.FAILED, Status.FAILED, Status.ERROR]
    diff = ev.cases[1].difference
    assert diff is not None
    assert (diff.line, diff.output_line, diff.expected, diff.got_untrusted) == (3, 4, "42", "41\x1b[2J")
    assert ev.cases[1].memory_bytes == 13 * MiB and ev.cases[1].exit_code == 0
    assert ev.cases[2].difference is not None and ev.cases[2].difference.got_untrusted is None
    assert ev.cases[3].signal == 11 and ev.cases[3].difference is None
    assert "\x1b" not in ev.to_json()  # control characters escaped, as everywhere


def _suite() -> Any:
    from verifier.suite import Suite

    return Suite(
        files={"suite.toml": b'kind = "program"\n', "cases/1.in": b"", "cases/1.out": b""},
        manifest=parse_manifest(b'kind = "program"\n'),
    )


def test_ok_needs_every_case_passed() -> None:
    base: dict[str, Any] = {
        **{"evidence_id": "e", "ok": True, "status": Status.PASSED, "reason": "r", "candidate_sha256": "c"},
        **{"suite_sha256": "s", "image_id": "i", "limits": Limits(), "verifier_version": "0"},
        "counts": {"expected": 1, "passed": 1},
    }
    Evidence(**base, cases=[CaseOutcome(name="1", status=Status.PASSED, message="m")])
    with pytest.raises(ValueError, match="every case"):
        Evidence(**base, cases=[CaseOutcome(name="1", status=Status.TIMEOUT, message="m")])


def test_the_host_checks_every_case_field() -> None:
    good = json.loads(result_line([case("1")]).split(b" ", 3)[3])
    for bad, error in (
        ({"outcome": "accepted"}, "unknown 'accepted'"),
        ({"memory_bytes": -1}, "negative"),
        ({"line": "3"}, "unexpected str"),
        ({"ran": 1}, "unexpected int"),
    ):
        payload = {**good, "cases": [{**good["cases"][0], **bad}]}
        with pytest.raises(ProtocolError, match=error):
            parse_result(json.dumps(payload).encode(), max_bytes=1 << 20)
    with pytest.raises(ProtocolError, match="too many"):
        many = {**good, "cases": good["cases"] * (protocol.MAX_CASES + 1)}
        parse_result(json.dumps(many).encode(), max_bytes=1 << 24)
    with pytest.raises(ProtocolError, match="kind"):
        parse_result(json.dumps({**good, "kind": "movie"}).encode(), max_bytes=1 << 20)
    long = {**good, "cases": [{**good["cases"][0], "got_line_untrusted": "\ud800" + "x" * 5000, "summary": "a\nb"}]}
    record = parse_result(json.dumps(long).encode(), max_bytes=1 << 20).cases[0]
    assert record.got_line_untrusted is not None and len(record.got_line_untrusted) == protocol.MAX_LINE
    assert record.got_line_untrusted[0] == "\ufffd" and record.summary == "a b"


def test_a_program_is_one_file_or_a_folder_that_holds_it(tmp_path: Path) -> None:
    """A folder is the program's file (the suite's module) with files beside it (/run_code's
    `files`); a folder without that file is refused before any sandbox."""
    from verifier import Candidate

    suite = load_suite(write_suite(tmp_path / "s", 'kind = "program"\n'))
    verifier = Verifier(backend=FakeBackend(lambda job: raw_run()), image="x")
    folder = Candidate.from_files({"main.py": "print(3)\n", "helper.py": ""})
    ev = verifier.check(folder, suite)
    assert ev.status is Status.INVALID_INPUT and "runs one file" in ev.reason and "solution.py" in ev.reason
    beside = verifier.check(Candidate.from_files({"solution.py": "print(3)\n", "data.txt": "x"}), suite)
    assert beside.status is not Status.INVALID_INPUT
