"""`review()`: read the two trees, plan the two runs, find their environments, run, classify.

The one place that turns a review request into `ReviewEvidence`. Bad input (unknown ref,
patch that does not apply, no tests, dependencies that cannot be resolved) raises
`InvalidInput`; a sandbox that cannot run or returns no result raises `SandboxUnavailable`.
Tests that fail, crash or hang are evidence, never exceptions.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from verifier._distribution import __version__
from verifier.errors import InvalidInput, SandboxUnavailable
from verifier.hashing import sha256_bytes
from verifier.limits import REVIEW_LIMITS, Limits
from verifier.review import backend_metadata, pytest_options
from verifier.review import deps as deps_mod
from verifier.review.classify import SideView, build_table, environment_problem, expectations, verdict
from verifier.review.gitread import Files, GitRepo, Snapshot, apply_patch, read_patch, tree_id
from verifier.review.instances import InstanceSpec
from verifier.review.provenance import ProvenanceIndex
from verifier.review.review_evidence import (
    EnvironmentRecord,
    ExpectedTest,
    ProjectRecord,
    PytestSession,
    Resolution,
    ReviewEvidence,
    RunRecord,
    Timings,
    TreeRef,
    identity,
    review_id,
)
from verifier.review.sandbox_runs import BaseRunCache, RunOutput, RunPlan, failure, run_both
from verifier.review.split import (
    Splitter,
    TestsMode,
    base_mode_tests,
    compose,
    infrastructure_changes,
    uses_hypothesis,
)
from verifier.sandbox import environment as env_mod
from verifier.sandbox.admission import Admission
from verifier.sandbox.backend import SandboxBackend
from verifier.sandbox.container import Client, connect, image_id
from verifier.sandbox.docker_engine import DockerBackend
from verifier.sandbox.image import image_tag

Progress = Callable[[str], None]


@dataclass(frozen=True)
class ReviewRequest:
    """What to review. `head` and `patch` are exclusive; with a patch the head is base + patch."""

    repo: Path
    base: str
    head: str | None = "HEAD"
    patch: Path | None = None
    tests: TestsMode = "head"
    requirements: Path | None = None
    #: Files or folders that are tests (pytest is given them as its paths): `--test-path`.
    test_paths: tuple[str, ...] = ()
    #: Extra pytest options for both sides' sessions (`pytest_options.check`): `--pytest-args`.
    pytest_args: tuple[str, ...] = ()
    limits: Limits = field(default_factory=lambda: REVIEW_LIMITS)
    image: str | None = None
    #: Reuse the base tree's own run from an earlier review of the same base (`BaseRunCache`).
    cache: bool = True
    #: An instance's test_patch (SWE-bench): applied on the base before `patch`; needs `patch`.
    test_patch: Path | None = None
    #: FAIL_TO_PASS / PASS_TO_PASS: ok then means resolved (`--expect`, `--instances`).
    expect: InstanceSpec | None = None


@dataclass(frozen=True)
class Trees:
    base: Snapshot
    head: Snapshot
    patch_sha256: str | None
    object_format: str
    repository_uri: str | None = None
    test_patch_sha256: str | None = None


def read_trees(req: ReviewRequest) -> Trees:
    """Both trees, read through git only. Raises InvalidInput for every bad input."""
    if req.patch is not None and req.head not in (None, "HEAD"):
        raise InvalidInput("give --head or --patch, not both")
    if req.test_patch is not None and req.patch is None:
        raise InvalidInput("a test_patch needs a patch to apply after it")
    repo = GitRepo(req.repo)
    base = repo.snapshot(req.base)
    if req.patch is None:
        head = repo.snapshot(req.head or "HEAD")
        return Trees(base, head, None, repo.object_format, repo.remote_uri())
    patch = read_patch(req.patch)
    files, ref, test_sha = base.files, "base + patch", None
    if req.test_patch is not None:
        test_patch = read_patch(req.test_patch)
        files, ref, test_sha = apply_patch(files, test_patch), "base + test_patch + patch", sha256_bytes(test_patch)
    files = apply_patch(files, patch)
    head = Snapshot(ref=ref, commit=None, tree_id=tree_id(files, repo.object_format), files=files)
    return Trees(base, head, sha256_bytes(patch), repo.object_format, repo.remote_uri(), test_sha)


def plan_trees(trees: Trees, mode: TestsMode, test_paths: tuple[str, ...] = ()) -> tuple[Splitter, Files, Files]:
    """(splitter, base run's tree, head run's tree) for the tests mode. The tests' side (the
    head's tests, or the base's) has the pytest configuration that decides what is a test."""
    base, head = trees.base.files, trees.head.files
    tests_side, other = (head, base) if mode == "head" else (base, head)
    splitter = Splitter.for_change(tests_side, other, test_paths)
    if mode == "head":
        base_run, head_run = compose(base, head, splitter), dict(head)
    else:
        tests = base_mode_tests(base, head, splitter)
        base_run, head_run = compose(base, tests, splitter), compose(head, tests, splitter)
    if not any(splitter.is_test_file(p) for p in head_run):
        side = "head" if mode == "head" else "base"
        where = ", ".join(r or "the root" for r in splitter.roots)
        raise InvalidInput(
            f"no tests: the {side} tree has no file pytest would collect (python_files "
            f"{' '.join(splitter.python_files)} under {where}); name test files or folders with --test-path"
        )
    return splitter, base_run, head_run


#: Each side's metadata from its build backend (None: read from its files), base then head.
Metadatas = tuple[backend_metadata.BackendMetadata | None, backend_metadata.BackendMetadata | None]


def dependency_specs(
    trees: Trees, mode: TestsMode, requirements: Path | None, metadata: Metadatas = (None, None)
) -> tuple[deps_mod.DependencySpec, deps_mod.DependencySpec]:
    """Each run's dependencies: its code side's runtime ones + its tests side's test ones."""
    if requirements is not None:
        spec = deps_mod.from_file(requirements)
        return spec, spec
    base_meta, head_meta = metadata
    tests_tree, tests_meta = (trees.head.files, head_meta) if mode == "head" else (trees.base.files, base_meta)
    test_deps = deps_mod.declared(tests_tree, runtime=False, tests=True, metadata=tests_meta)
    base = deps_mod.declared(trees.base.files, runtime=True, tests=False, metadata=base_meta).union(test_deps)
    head = deps_mod.declared(trees.head.files, runtime=True, tests=False, metadata=head_meta).union(test_deps)
    return base, head


def backend_metadatas(
    client: Client | None, trees: Trees, sandbox: str, say: Progress, backend: SandboxBackend | None = None
) -> Metadatas:
    """Each side's metadata from its build backend, in the sandbox, where reading its files is not
    exact (`backend_metadata.dynamic_reason`); the same tree is computed once. A backend that fails
    where only the name or version is dynamic leaves the (exact) reading of the files."""
    found: dict[str, backend_metadata.BackendMetadata | None] = {}

    def one(snap: Snapshot) -> backend_metadata.BackendMetadata | None:
        if snap.tree_id in found:
            return found[snap.tree_id]
        why = backend_metadata.dynamic_reason(snap.files)
        meta = None
        if why is not None:
            say(f"{snap.ref}: {why.reason}: asking its build backend, in the sandbox")
            try:
                meta = backend_metadata.compute(client, snap.files, snap.tree_id, sandbox, say, backend)
            except deps_mod.DependencyError:
                if why.dependencies:
                    raise
        found[snap.tree_id] = meta
        return meta

    return one(trees.base), one(trees.head)


def pytest_session(splitter: Splitter, user_args: tuple[str, ...]) -> PytestSession:
    """What both sides' pytest sessions are given, and what decided which files are tests."""
    return PytestSession(
        config_file=splitter.config.inifile,
        paths=[r or "." for r in splitter.roots],
        python_files=list(splitter.python_files),
        python_classes=list(splitter.config.get("python_classes")),
        python_functions=list(splitter.config.get("python_functions")),
        args=[*splitter.session_options(), *user_args],
    )


def _environments(
    client: Client | None,
    specs: tuple[deps_mod.DependencySpec, ...],
    sandbox: str,
    say: Progress,
    backend: SandboxBackend | None = None,
) -> dict[tuple[str, ...], env_mod.Environment]:
    """The environment image of each distinct dependency set, found or built (on every node of
    `backend` when one is given, else on `client`'s engine)."""
    envs: dict[tuple[str, ...], env_mod.Environment] = {}
    for spec in specs:
        if spec.requirements not in envs:
            envs[spec.requirements] = (
                backend.environment(spec, sandbox)
                if backend is not None
                else env_mod.ensure(DockerBackend(client), spec, sandbox, say)
            )
            say(f"environment: {env_mod.describe(envs[spec.requirements])}")
    return envs


def side_environments(
    client: Client | None,
    req: ReviewRequest,
    trees: Trees,
    sandbox: str,
    say: Progress,
    backend: SandboxBackend | None = None,
) -> tuple[Metadatas, tuple[env_mod.Environment, env_mod.Environment]]:
    """Each side's metadata from its build backend (where it is dynamic, without --requirements)
    and each side's environment image, found or built."""
    metadata = backend_metadatas(client, trees, sandbox, say, backend) if req.requirements is None else (None, None)
    base_spec, head_spec = dependency_specs(trees, req.tests, req.requirements, metadata)
    envs = _environments(client, (base_spec, head_spec), sandbox, say, backend)
    return metadata, (envs[base_spec.requirements], envs[head_spec.requirements])


def base_session_options(splitter: Splitter, trees: Trees) -> tuple[str, ...]:
    """The options that pin a session of the base's tests to the base's configuration."""
    base = Splitter.for_tree(trees.base.files, splitter.claimed, also=trees.head.files)
    return base.session_options()


def run_plans(
    trees: Trees,
    mode: TestsMode,
    splitter: Splitter,
    files: tuple[Files, Files],
    envs: tuple[env_mod.Environment, env_mod.Environment],
    base_tests_too: bool,
    user_args: tuple[str, ...] = (),
    metadata: Metadatas = (None, None),
) -> list[RunPlan]:
    """The base and head runs of the tests mode, and (`base_tests_too`) the base's own tests on
    both sides' code. Each session is pinned to the configuration of the tests it runs, then given
    `user_args` (--pytest-args); every session starts from the --test-paths."""
    base_files, head_files = files
    base_env, head_env = envs
    hypothesis = uses_hypothesis(base_files) or uses_hypothesis(head_files)
    fmt = trees.object_format
    tests_from: Literal["head", "base+added"] = "head" if mode == "head" else "base+added"
    base_project = deps_mod.project_info(trees.base.files, metadata[0])
    head_project = deps_mod.project_info(trees.head.files, metadata[1])
    args = (*splitter.session_options(), *user_args)
    base_args = (*base_session_options(splitter, trees), *user_args)
    test_paths = tuple(p or "." for p in splitter.claimed)
    select = test_paths or None
    plans = [
        RunPlan("base", "base", tests_from, base_files, tree_id(base_files, fmt), base_env, base_project, hypothesis,
                select, args),
        RunPlan("head", "head", tests_from, head_files, tree_id(head_files, fmt), head_env, head_project, hypothesis,
                select, args),
    ]  # fmt: skip
    if base_tests_too:
        old_on_head = compose(trees.head.files, trees.base.files, splitter)
        plans += [
            RunPlan("base_tests_on_base", "base", "base", dict(trees.base.files), trees.base.tree_id, base_env,
                    base_project, hypothesis, select, base_args),
            RunPlan("base_tests_on_head", "head", "base", old_on_head, tree_id(old_on_head, fmt), head_env,
                    head_project, hypothesis, select, base_args),
        ]  # fmt: skip
    return plans


def review(
    req: ReviewRequest,
    *,
    progress: Progress | None = None,
    client: Client | None = None,
    backend: SandboxBackend | None = None,
    admission: Admission | None = None,
) -> ReviewEvidence:
    """Review one change. Raises InvalidInput (bad input) or SandboxUnavailable (no result).

    Its sandbox jobs run on this machine's engine (`client`; slots of `admission`, else a fresh
    `Admission()`), or on `backend` (a Ray cluster's nodes: the environments built on each)."""
    say = progress or (lambda _m: None)
    t0 = time.monotonic()
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    user_args = pytest_options.check(req.pytest_args)
    trees = read_trees(req)
    splitter, base_files, head_files = plan_trees(trees, req.tests, req.test_paths)
    session = pytest_session(splitter, user_args)
    provenance = ProvenanceIndex(trees.base.files, trees.head.files, splitter)
    base_tests_too = req.tests == "head" and provenance.tests_touched()
    dependency_specs(trees, req.tests, req.requirements)  # what the files declare, refused before any sandbox
    t_read = time.monotonic()

    client = client or (connect() if backend is None else None)
    sandbox = req.image or image_tag()
    sandbox_id = _sandbox_image_id(client, backend, sandbox)
    metadata, side_envs = side_environments(client, req, trees, sandbox, say, backend)
    t_env = time.monotonic()

    plans = run_plans(
        trees, req.tests, splitter, (base_files, head_files), side_envs, base_tests_too, user_args, metadata
    )
    say(f"running the tests in {len(plans)} sandboxes: " + ", ".join(p.side.replace("_", " ") for p in plans))
    outputs = _run(plans, req, say, backend, admission)
    views: dict[str, SideView] = {o.plan.side: SideView(o.result) for o in outputs}
    removed = provenance.removed_tests() if req.tests == "head" else []
    judges = (views["base_tests_on_base"], views["base_tests_on_head"]) if base_tests_too else None
    table = build_table(
        views["base"], views["head"], provenance, removed, judges, "head" if req.tests == "head" else "base"
    )
    _raise_environment_problem(views, trees)
    stops = {side: view.stopped() for side, view in views.items()}
    collected = {side: len(view.collected()) for side, view in views.items()}
    expected = expectations(table, req.expect.fail_to_pass, req.expect.pass_to_pass) if req.expect else None
    ok, reason = verdict(table, stops, collected, expected)

    fields = {
        "ok": ok,
        "reason": reason,
        "repository": req.repo.resolve().name,
        "repository_uri": trees.repository_uri,
        "hostname": socket.gethostname(),
        "base": TreeRef(ref=trees.base.ref, commit=trees.base.commit, tree=trees.base.tree_id).model_dump(),
        "head": TreeRef(ref=trees.head.ref, commit=trees.head.commit, tree=trees.head.tree_id).model_dump(),
        "patch_sha256": trees.patch_sha256,
        "test_patch_sha256": trees.test_patch_sha256,
        "resolution": _resolution(ok, expected),
        "tests_mode": req.tests,
        "pytest": session.model_dump(),
        "isolation": "in-process",
        "sandbox_image_id": sandbox_id,
        "limits": req.limits.model_dump(),
        "controls": {},
        "runs": [_run_record(o, views[o.plan.side], stops[o.plan.side]).model_dump() for o in outputs],
        "tests": [r.model_dump() for r in table.rows],
        "counts": table.counts.model_dump(),
        "edited_judges": table.edited_judges,
        "test_infrastructure_changes": infrastructure_changes(trees.base.files, trees.head.files, splitter),
        "notes": _notes(trees),
        "verifier_version": __version__,
    }
    fields["controls"] = ReviewEvidence.model_fields["controls"].default.model_dump()
    fields["review_id"] = review_id(identity(fields))
    by_side = {o.plan.side: o.wall_s for o in outputs}
    fields["timings"] = Timings(
        started_at=started_at, read_s=t_read - t0, environment_s=t_env - t_read, base_s=by_side["base"],
        head_s=by_side["head"], total_s=time.monotonic() - t0,
    ).model_dump()  # fmt: skip
    return ReviewEvidence.model_validate(fields)


def _raise_environment_problem(views: dict[str, SideView], trees: Trees) -> None:
    """EnvironmentProblem when both sides' tests cannot be collected for the same reason, not the change's."""
    problem = environment_problem(
        views["head"], views.get("base_tests_on_base", views["base"]), own_modules(trees.base.files, trees.head.files)
    )
    if problem:
        raise deps_mod.EnvironmentProblem(problem)


def own_modules(*trees: Files) -> set[str]:
    """Top-level module names the trees provide: every .py file's and every folder's name on the
    way to one (at the root, under src/, or deeper: tests import their helpers by folder name)."""
    names: set[str] = set()
    for files in trees:
        for path in files:
            if path.endswith(".py"):
                parts = path[:-3].split("/")
                names.update(p for p in parts if p.isidentifier())
    return names


def _resolution(ok: bool, expected: list[ExpectedTest] | None) -> dict[str, object] | None:
    """The evidence's `resolution` field: `verdict` decided, this only counts and lists."""
    if expected is None:
        return None
    return Resolution(
        resolved=ok,
        fail_to_pass=sum(1 for e in expected if e.expected == "fail_to_pass"),
        pass_to_pass=sum(1 for e in expected if e.expected == "pass_to_pass"),
        unmet=[e.test_id for e in expected if not e.met],
        tests=expected,
    ).model_dump()


def _sandbox_image_id(client: Client | None, backend: SandboxBackend | None, sandbox: str) -> str:
    """The sandbox image's id on `backend` (every node), or on `client`'s engine."""
    try:
        if backend is not None:
            return backend.image_id(sandbox)
        if client is None:  # review() connects unless a backend runs its jobs
            raise SandboxUnavailable("no engine to run on")
        return image_id(client.api, sandbox)
    except SandboxUnavailable as exc:  # not built (ImageNotFound), or the engine failed
        raise SandboxUnavailable(f"the sandbox image {sandbox} is not available; run `verifier image build`") from exc


def _run(
    plans: list[RunPlan],
    req: ReviewRequest,
    say: Progress,
    backend: SandboxBackend | None,
    admission: Admission | None = None,
) -> list[RunOutput]:
    """Every planned session, side by side; SandboxUnavailable when one produced no result."""
    outputs = run_both(
        plans,
        req.limits,
        on_done=lambda o: say(
            f"{o.plan.side} run " + ("read from the cache" if o.cached else f"finished in {o.wall_s:.1f} s")
        ),
        cache=BaseRunCache() if req.cache else None,
        backend=backend,
        admission=admission,
    )
    for out in outputs:
        why = failure(out)
        if why is not None:
            raise SandboxUnavailable(why)
    return outputs


def _run_record(out: RunOutput, view: SideView, stopped: str) -> RunRecord:
    plan, first = out.plan, view.first
    env = plan.environment
    return RunRecord(
        side=plan.side,
        code_from=plan.code_from,
        tests_from=plan.tests_from,
        tree=plan.tree_id,
        environment=EnvironmentRecord(
            digest=env.digest,
            image_id=env.image_id,
            requirements=list(env.spec.requirements),
            sources=list(env.spec.sources),
            packages=list(env.packages),
            built=env.built,
        ),
        project=ProjectRecord(
            name=plan.project.name, version=plan.project.version, import_roots=list(plan.project.import_roots)
        ),
        complete=not stopped,
        stopped=stopped,
        collected=len(view.collected()),
        collection_errors=len(first.collect_errors) if first else 0,
        reran=len(view.rerun.results) if view.rerun else 0,
        exit_status=first.exit_status if first else None,
        duration_s=out.raw.duration_s,
        sandbox_s=out.raw.overhead_s,
        log_tail_untrusted=_log_tail(view),
        tampered=[*(first.tampered if first else []), *(view.rerun.tampered if view.rerun else [])],
        cached=out.cached,
    )


def _log_tail(view: SideView) -> str:
    """The session's console tail, then the in-container runner's own error (both can quote the repository)."""
    tail = view.first.log_tail if view.first else ""
    error = view.result.error if view.result is not None else None
    return f"{tail}\n[runner error] {error}" if error else tail


def _notes(trees: Trees) -> list[str]:
    notes = []
    for snap in (trees.base, trees.head):
        if snap.skipped_submodules:
            notes.append(f"{snap.ref}: submodules are not part of the reviewed tree ({len(snap.skipped_submodules)})")
    return notes
