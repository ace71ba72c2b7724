"""`verifier bench humaneval`'s own logic, on a fake sandbox (the real one: test_humaneval.py).

The fake stands in for the engine only: the command, the batch, the Verifier and the
evidence decisions are the real ones."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from verifier.bench import humaneval as he
from verifier.cli import app
from verifier.limits import Limits
from verifier.sandbox.backend import RawRun, SandboxJob
from verifier.sandbox.fake import FakeBackend, answer, raw_run
from verifier.verify import Verifier

PROBLEMS = he.load_problems()


def passing(job: SandboxJob) -> RawRun:
    return answer(job)


def broken(job: SandboxJob) -> RawRun:
    return raw_run(b"", exit_code=1, stderr=b"the engine went away")  # no result line: infra_error


@pytest.fixture
def fake_sandbox(monkeypatch: pytest.MonkeyPatch) -> Callable[[Callable[[SandboxJob], RawRun]], list[Limits]]:
    """Route the command's sandbox to a FakeBackend; returns the limits it was built with."""
    seen: list[Limits] = []

    def install(handler: Callable[[SandboxJob], RawRun]) -> list[Limits]:
        def pooled(
            cls: type[Verifier], pool: Any = None, *, limits: Limits, image: Any = None, admission: Any = None
        ) -> Verifier:
            seen.append(limits)  # the command's warm pool
            return Verifier(backend=FakeBackend(handler), image="x", limits=limits)

        monkeypatch.setattr(Verifier, "pooled", classmethod(pooled))
        monkeypatch.setattr("verifier.sandbox.image.build", lambda *a, **k: ("x", False))
        monkeypatch.setattr("verifier.sandbox.docker_engine.connect", lambda: None)
        return seen

    return install


def samples(tmp_path: Path, per_task: dict[str, int]) -> Path:
    path = tmp_path / "samples.jsonl"
    lines = [
        {"task_id": task, "completion": PROBLEMS[task]["canonical_solution"]}
        for task, n in per_task.items()
        for _ in range(n)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def bench(*args: str) -> Any:
    return CliRunner().invoke(app, ["bench", "humaneval", *args, "--workers", "1"])


def summary(output: str) -> dict[str, Any]:
    return dict(json.loads(output[output.index("{") :]))


def test_default_k_and_the_reference_rule(tmp_path: Path, fake_sandbox: Any) -> None:
    fake_sandbox(passing)
    done = bench(str(samples(tmp_path, {"HumanEval/0": 10, "HumanEval/1": 3})))
    assert done.exit_code == 0, done.output
    out = summary(done.stdout)
    assert out["pass@1"] == 1.0
    assert "pass@10" not in out and "pass@100" not in out  # HumanEval/1 has only 3 samples
    assert set(out["pass@k_not_reported"]) == {"pass@10", "pass@100"}


def test_k_option(tmp_path: Path, fake_sandbox: Any) -> None:
    fake_sandbox(passing)
    done = bench(str(samples(tmp_path, {"HumanEval/0": 3})), "--k", "2,3")
    assert done.exit_code == 0, done.output
    out = summary(done.stdout)
    assert out["pass@2"] == 1.0 and out["pass@3"] == 1.0 and "pass@1" not in out
    bad = bench(str(samples(tmp_path, {"HumanEval/0": 1})), "--k", "0,x")
    assert bad.exit_code == 2 and "--k must be positive integers" in bad.stderr


def test_an_incomplete_sample_set_is_flagged(tmp_path: Path, fake_sandbox: Any) -> None:
    fake_sandbox(passing)
    done = bench(str(samples(tmp_path, {"HumanEval/0": 1, "HumanEval/5": 1})))
    assert done.exit_code == 0
    assert "the samples attempt 2 of the 164 problems" in done.stderr
    out = summary(done.stdout)
    assert (out["problems_attempted"], out["problems_in_file"]) == (2, 164)


def test_default_timeout_is_the_references_3_seconds(tmp_path: Path, fake_sandbox: Any) -> None:
    limits = fake_sandbox(passing)
    assert bench(str(samples(tmp_path, {"HumanEval/0": 1}))).exit_code == 0
    assert limits[0].call_timeout_s == 3.0
    help_text = CliRunner().invoke(app, ["bench", "humaneval", "--help"], terminal_width=200).stdout
    assert "default: 3.0" in help_text and "reference's timeout" in help_text


def test_infra_errors_exit_2_not_1(tmp_path: Path, fake_sandbox: Any) -> None:
    fake_sandbox(broken)
    done = bench(str(samples(tmp_path, {"HumanEval/0": 2})))
    assert done.exit_code == 2
    assert "2 sample(s) could not be verified" in done.stderr
    rows = [json.loads(x) for x in Path(f"{tmp_path}/samples.jsonl_results.jsonl").read_text().splitlines()]
    assert {r["status"] for r in rows} == {"infra_error"}
