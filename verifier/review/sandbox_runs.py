"""Run one tree's tests in a hardened container; the base and head runs side by side.

Each run is one `SandboxJob` in mode "plain" on `DockerBackend` (unprivileged uid, no
capabilities, read-only root, tmpfs /tmp, no network, the review's `Limits`). The tree and a
`ReviewHeader` go in over stdin (`verifier.runner.review_protocol`, the module both sides
import); the in-container supervisor writes the tree to a scratch copy under /tmp, runs pytest,
and answers with one nonce-bound line. Ctrl-C kills this review's
containers (found by a label unique to the review), and the backend removes them.

Another `SandboxBackend` may run the jobs instead (`verifier review batch --ray`: `RayBackend`,
each job on a node of the cluster, rerun on another node when its node dies); then Ctrl-C leaves
the jobs in flight to end within their limits on their nodes.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from verifier._distribution import __version__
from verifier.hashing import canonical_json, sha256_bytes
from verifier.limits import Limits
from verifier.review.deps import ProjectInfo
from verifier.review.gitread import Files, to_tar
from verifier.review.supervisor_result import SupervisorResult, parse
from verifier.runner.review_protocol import (
    COMMAND,
    PROTOCOL,
    SITE_DIR,
    WORK_DIR,
    ReviewHeader,
    ReviewProject,
    encode_job,
)
from verifier.sandbox.admission import Admission
from verifier.sandbox.backend import RawRun, SandboxBackend, SandboxJob
from verifier.sandbox.docker_engine import DockerBackend
from verifier.sandbox.environment import Environment, cache_dir
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
    #: Read from the cache of the base tree's own runs (`BaseRunCache`), not run again.
    cached: bool = False


class BaseRunCache:
    """The base tree's own tests on the base code, kept by content.

    That run (``base_tests_on_base``) depends only on the base tree, its environment image, the
    sandbox image, the limits and this version's protocol, and every change reviewed against the
    same base (most pull requests of a day) needs it again: it is kept on the host, keyed by a
    digest of all of them, and only when it completed untouched (no runner error, no tampering,
    every collected test reported)."""

    FORMAT = 1

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or cache_dir("review") / "base-runs"

    def key(self, plan: RunPlan, limits: Limits) -> str:
        env = plan.environment
        what = {
            "format": self.FORMAT,
            "protocol": PROTOCOL,
            "verifier": __version__,
            "tree": plan.tree_id,
            "environment": [env.digest, env.image_id],
            "limits": limits.model_dump(mode="json"),
            "hypothesis": plan.hypothesis,
            "project": [plan.project.name, plan.project.version, list(plan.project.import_roots)],
            "select": list(plan.select or ()),
            "pytest_args": list(plan.pytest_args),
        }
        return sha256_bytes(canonical_json(what))

    def get(self, plan: RunPlan, limits: Limits) -> RunOutput | None:
        path = self.root / f"{self.key(plan, limits)}.json"
        try:
            data = json.loads(path.read_text())
            result = SupervisorResult.model_validate(data["result"])
            raw = RawRun(
                exit_code=data["exit_code"], stdout=b"", stderr=b"", truncated=False, timed_out=False,
                oom_killed=False, output_limited=False, duration_s=float(data["duration_s"]),
                overhead_s=float(data["overhead_s"]), image_id=str(data["image_id"]), container_id="",
            )  # fmt: skip
        except (OSError, ValueError, KeyError, TypeError):
            return None  # absent, or unreadable: run it
        return RunOutput(plan=plan, result=result, raw=raw, wall_s=0.0, cached=True)

    def put(self, out: RunOutput, limits: Limits) -> None:
        result = out.result
        first = result.first if result is not None else None
        if result is None or result.error or first is None or first.collected is None or first.tampered:
            return
        if first.timed_out or first.exit_status is None or any(i not in first.results for i, *_ in first.collected):
            return
        self.root.mkdir(parents=True, exist_ok=True)
        record = {
            "result": result.model_dump(mode="json"),
            "exit_code": out.raw.exit_code,
            "duration_s": out.raw.duration_s,
            "overhead_s": out.raw.overhead_s,
            "image_id": out.raw.image_id,
        }
        path = self.root / f"{self.key(out.plan, limits)}.json"
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(record))
        os.replace(tmp, path)  # readers see the whole file or none


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


def run_one(
    plan: RunPlan,
    limits: Limits,
    review_label: str,
    backend: SandboxBackend | None = None,
    admission: Admission | None = None,
) -> RunOutput:
    """One run in a fresh container (on `backend`, or this machine's engine, whose job waits for a
    machine-wide slot of `admission`: a batch passes one to all its runs, and reads from it how
    many wait). Raises SandboxUnavailable only when no container ran."""
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
    raw = (backend or DockerBackend(admission=admission)).run(job)
    result = None if raw.output_limited else parse(raw.stdout, nonce)
    return RunOutput(plan=plan, result=result, raw=raw, wall_s=time.monotonic() - started)


def run_both(
    plans: list[RunPlan],
    limits: Limits,
    on_done: Callable[[RunOutput], None] | None = None,
    cache: BaseRunCache | None = None,
    backend: SandboxBackend | None = None,
    admission: Admission | None = None,
) -> list[RunOutput]:
    """All runs at once (each in its own container); on Ctrl-C every container is killed.

    A ``base_tests_on_base`` run is read from `cache` when it holds it, and kept there after it ran."""
    label = uuid.uuid4().hex

    def one(plan: RunPlan) -> RunOutput:
        cacheable = cache is not None and plan.side == "base_tests_on_base"
        if cacheable and cache is not None and (hit := cache.get(plan, limits)) is not None:
            return hit
        out = run_one(plan, limits, label, backend, admission)
        if cacheable and cache is not None:
            cache.put(out, limits)
        return out

    pool = ThreadPoolExecutor(max_workers=len(plans), thread_name_prefix="verifier-review")
    futures: list[Future[RunOutput]] = []
    lock = threading.Lock()

    def report(fut: Future[RunOutput]) -> None:
        if on_done is not None and fut.exception() is None:
            with lock:
                on_done(fut.result())

    try:
        for plan in plans:
            fut = pool.submit(one, plan)
            fut.add_done_callback(report)
            futures.append(fut)
        return [f.result() for f in futures]
    except BaseException:
        # Ctrl-C (or any failure): kill this review's containers until every run has returned.
        # Repeatedly: a container still being created when the first kill went out starts later.
        while backend is None and not all(f.done() for f in futures):
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
