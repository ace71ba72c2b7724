"""Run one tree's tests in a hardened container; the base and head runs side by side.

Each run is one `SandboxJob` in mode "plain" on `DockerBackend` (unprivileged uid, no
capabilities, read-only root, tmpfs /tmp, no network, the review's `Limits`). The tree and a
`ReviewHeader` go in over stdin (`verifier.runner.review_protocol`, the module both sides
import); the in-container supervisor writes the tree to a scratch copy under /tmp, runs pytest,
and answers with one nonce-bound line. Ctrl-C kills this review's
containers (found by a label unique to the review), and the backend removes them.
"""

from __future__ import annotations

import secrets
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Literal

from verifier.limits import Limits
from verifier.review.deps import ProjectInfo
from verifier.review.environment import Environment
from verifier.review.gitread import Files, to_tar
from verifier.review.supervisor_result import SupervisorResult, parse
from verifier.runner.review_protocol import COMMAND, SITE_DIR, WORK_DIR, ReviewHeader, ReviewProject, encode_job
from verifier.sandbox.backend import RawRun, SandboxJob
from verifier.sandbox.docker_engine import DockerBackend
from verifier.sandbox.gc import sweep

LABEL_REVIEW = "org.verifier.review.run"

Side = Literal["base", "head"]
RunName = Literal["base", "head", "base_tests_on_base", "base_tests_on_head"]


@dataclass(frozen=True)
class RunPlan:
    """What one run sees: a tree (one side's code, one side's tests) in one environment."""

    side: RunName
    code_from: Side
    tests_from: Literal["base", "head", "base+added"]
    files: Files
    tree_id: str
    environment: Environment
    project: ProjectInfo
    hypothesis: bool
    #: Test files the session runs (None: pytest's own choice, all of them).
    select: tuple[str, ...] | None = None
    #: Options for every pytest session of the run (`Splitter.session_options` + --pytest-args).
    pytest_args: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunOutput:
    plan: RunPlan
    result: SupervisorResult | None
    raw: RawRun
    wall_s: float


def budget_s(limits: Limits) -> float:
    """The supervisor's own deadline: a little under the host's, so it reports before the kill."""
    return max(1.0, limits.timeout_s - max(5.0, 0.05 * limits.timeout_s))


def payload(plan: RunPlan, limits: Limits, nonce: str, *, rerun: bool = True) -> bytes:
    tree = to_tar(plan.files)
    header = ReviewHeader(
        nonce=nonce,
        tree_bytes=len(tree),
        budget_s=budget_s(limits),
        pythonpath=(SITE_DIR, *(f"{WORK_DIR}/{r}" if r else WORK_DIR for r in plan.project.import_roots)),
        hypothesis=plan.hypothesis,
        rerun=rerun,
        pytest_args=plan.pytest_args,
        select=plan.select or (),
        project=ReviewProject(
            name=plan.project.name or "",
            version=plan.project.version or "",
            entry_points=plan.project.entry_points,
        ),
        work_dir=WORK_DIR,
        site_dir=SITE_DIR,
    )
    return encode_job(header, tree)


def run_one(plan: RunPlan, limits: Limits, review_label: str) -> RunOutput:
    """One run in a fresh container. Raises SandboxUnavailable only when no container ran."""
    nonce = secrets.token_hex(16)
    job = SandboxJob(
        image=plan.environment.image_ref,
        command=COMMAND,
        limits=limits,
        stdin=payload(plan, limits, nonce),
        mode="plain",
        labels={LABEL_REVIEW: review_label},
    )
    started = time.monotonic()
    raw = DockerBackend().run(job)
    result = None if raw.output_limited else parse(raw.stdout, nonce)
    return RunOutput(plan=plan, result=result, raw=raw, wall_s=time.monotonic() - started)


def run_both(
    plans: list[RunPlan], limits: Limits, on_done: Callable[[RunOutput], None] | None = None
) -> list[RunOutput]:
    """All runs at once (each in its own container); on Ctrl-C every container is killed."""
    label = uuid.uuid4().hex
    pool = ThreadPoolExecutor(max_workers=len(plans), thread_name_prefix="verifier-review")
    futures: list[Future[RunOutput]] = []
    lock = threading.Lock()

    def report(fut: Future[RunOutput]) -> None:
        if on_done is not None and fut.exception() is None:
            with lock:
                on_done(fut.result())

    try:
        for plan in plans:
            fut = pool.submit(run_one, plan, limits, label)
            fut.add_done_callback(report)
            futures.append(fut)
        return [f.result() for f in futures]
    except BaseException:
        # Ctrl-C (or any failure): kill this review's containers until every run has returned.
        # Repeatedly: a container still being created when the first kill went out starts later.
        while not all(f.done() for f in futures):
            try:
                sweep((f"{LABEL_REVIEW}={label}",), kill_only=True)
                wait(futures, timeout=0.5)
            except KeyboardInterrupt:
                continue
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def failure(output: RunOutput) -> str | None:
    """Why a run produced no usable result (a sandbox failure), or None."""
    raw = output.raw
    if output.result is not None:
        return None
    if raw.output_limited:
        return f"the {output.plan.side} run's output exceeded the output limit"
    if raw.timed_out:
        return f"the {output.plan.side} run was killed at the time limit before it could report"
    if raw.oom_killed:
        return f"the {output.plan.side} run's container ran out of memory before it could report"
    tail = raw.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
    return f"the {output.plan.side} run returned no result (exit {raw.exit_code}): {tail[0][:200]}"
