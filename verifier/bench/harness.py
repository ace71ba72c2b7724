"""What the benchmark harnesses share: one job per distinct (task, candidate), the verifier a
run policy asks for (local or on a Ray cluster), the batch (served from an evidence store where
it already holds a job's verdict, the rest verified and stored as they finish), pass@k and the
summary."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from verifier.bench.passk import DEFAULT_KS, pass_at_ks
from verifier.evidence import Evidence, Fault, Status
from verifier.inputs import Candidate
from verifier.limits import Limits, PoolConfig, RunPolicy
from verifier.suite import Suite
from verifier.verify import Verifier

if TYPE_CHECKING:
    from verifier.bench.store import EvidenceStore
    from verifier.cluster.backend import RayBackend
    from verifier.extract import Extracted

#: Jobs a warm container serves before it is replaced. A sample's job is small: a new container
#: costs about a third of a second of CPU, 2 ms a sample at the library's default of 200.
BENCH_MAX_USES = 1000

Job = tuple[Candidate, Suite]

#: A harness's sample (HumanEval's, a program's).
SampleT = TypeVar("SampleT")


def unique_jobs(samples: Iterable[tuple[str, Candidate, Suite]]) -> tuple[list[Job], list[int]]:
    """Identical (task, candidate bytes) pairs are verified once. `samples`: (task key,
    candidate, suite) per sample; returns (jobs, job index per sample)."""
    index: dict[tuple[str, str], int] = {}
    jobs: list[Job] = []
    mapping: list[int] = []
    for key, candidate, suite in samples:
        ident = (key, candidate.sha256)
        if ident not in index:
            index[ident] = len(jobs)
            jobs.append((candidate, suite))
        mapping.append(index[ident])
    return jobs, mapping


def status_counts(evidence: Iterable[Evidence]) -> dict[str, int]:
    """How many samples ended with each status (every status listed, zeros included)."""
    counts = Counter(ev.status.value for ev in evidence)
    return {status.value: counts.get(status.value, 0) for status in Status}


def not_verified(evidence: Iterable[Evidence]) -> int:
    """Samples that got no verdict on the model (the verifier's or the host's fault)."""
    return sum(ev.fault in (Fault.VERIFIER, Fault.HOST) for ev in evidence)


def infra_errors(evidence: Iterable[Evidence]) -> int:
    """Samples that got no verdict through our fault (infra_error)."""
    return sum(ev.fault is Fault.VERIFIER for ev in evidence)


def stayed_overloaded(evidence: Iterable[Evidence]) -> int:
    """Samples that got no verdict because the host was too busy, after their retries."""
    return sum(ev.fault is Fault.HOST for ev in evidence)


@contextmanager
def bench_verifier(
    policy: RunPolicy, *, workers: int, limits: Limits, image: str | None = None, ray: str | None = None
) -> Iterator[Verifier]:
    """The verifier of a bench run: `policy` on this machine (a pool of `workers` containers),
    or warm pools on every node of the Ray cluster at `ray`. Its containers start in the
    background: read the inputs inside the block. Benchmark suites pre-import nothing."""
    pool = PoolConfig(policy="reuse" if policy == "cold" else policy, size=workers, max_uses=BENCH_MAX_USES, preload="")
    if ray is not None:
        if policy == "cold":
            raise ValueError("a Ray cluster runs warm pools on its nodes: use the policy reuse or fresh")
        from verifier.cluster import ray_verifier

        verifier = ray_verifier(ray, pool, limits=limits, image=image)
    else:
        verifier = Verifier.with_policy(policy, pool, limits=limits, image=image)
    with verifier:
        yield verifier


def cluster_of(verifier: Verifier, ray: str | None) -> RayBackend | None:
    """The Ray backend of a `bench_verifier` made with `ray` (its nodes, slots and stats), or
    None for a verifier on this machine."""
    if ray is None:
        return None
    from verifier.cluster.backend import RayBackend

    made = verifier.backend_if_made
    return made if isinstance(made, RayBackend) else None


def cluster_summary(cluster: RayBackend) -> dict[str, Any]:
    """What a bench summary says about the Ray cluster it ran on."""
    stats = cluster.stats()
    return {"nodes": len(stats.nodes), "reruns": stats.reruns, "lost": [n.name for n in stats.lost]}


@dataclass(frozen=True)
class BenchRun:
    """What one bench run found: evidence per sample (in the samples' order) and the summary."""

    evidence: list[Evidence]
    summary: dict[str, Any]


def stored(verifier: Verifier, jobs: Sequence[Job], store: EvidenceStore | None) -> dict[int, Evidence]:
    """The jobs whose verdict `store` already holds (job index -> its evidence, marked cached):
    same candidate, suite, image and limits, so the same evidence_id."""
    if store is None or not len(store):
        return {}
    found: dict[int, Evidence] = {}
    for index, (candidate, suite) in enumerate(jobs):
        ev = store.get(verifier.planned_evidence_id(candidate, suite))
        if ev is not None:
            found[index] = ev
    return found


def sanitized(
    samples: Sequence[SampleT],
    extract: Callable[[SampleT], Extracted],
    with_code: Callable[[SampleT, str], SampleT],
) -> tuple[list[SampleT], dict[int, str]]:
    """`--sanitize`: each sample with the code `extract` took out of its chat answer (`with_code`
    puts it in), and (sample index -> why) for the samples with none: they stay as they were
    and are answered invalid_input, never run (`no_code`)."""
    out: list[SampleT] = []
    none: dict[int, str] = {}
    for index, sample in enumerate(samples):
        found = extract(sample)
        if found.code is None:
            none[index] = found.reason
            out.append(sample)
        else:
            out.append(with_code(sample, found.code))
    return out, none


def no_code(
    verifier: Verifier, jobs: Sequence[Job], mapping: Sequence[int], reasons: Mapping[int, str]
) -> dict[int, Evidence]:
    """`--sanitize`: the invalid_input evidence (job index -> evidence) of the samples (sample
    index -> why) whose answer has no code (`verifier.extract`): decided, never run."""
    return {
        mapping[i]: verifier.fail_closed(Status.INVALID_INPUT, reason, candidate_sha256=jobs[mapping[i]][0].sha256)
        for i, reason in reasons.items()
    }


def verify_jobs(
    verifier: Verifier,
    jobs: Sequence[Job],
    *,
    workers: int,
    progress: bool,
    store: EvidenceStore | None,
    decided: Mapping[int, Evidence] | None = None,
    overloaded_retries: int | None = None,
) -> tuple[list[Evidence], int]:
    """Evidence for every job (in order) and how many ran in a sandbox now: jobs whose verdict
    `store` holds are served from it, every other one is verified and appended to it the moment
    it finishes (so an interrupted run keeps what it did). `decided`: jobs whose evidence was made
    before any sandbox (e.g. a model's answer with no code: invalid_input), neither run nor stored.
    `overloaded_retries`: how often a job that ended overloaded is tried again (`verify_batch`)."""
    evidence, todo = _verify(
        verifier,
        jobs,
        workers=workers,
        progress=progress,
        store=store,
        decided=decided,
        overloaded_retries=overloaded_retries,
    )
    return evidence, len(todo)


def _verify(
    verifier: Verifier,
    jobs: Sequence[Job],
    *,
    workers: int,
    progress: bool,
    store: EvidenceStore | None,
    decided: Mapping[int, Evidence] | None,
    overloaded_retries: int | None,
) -> tuple[list[Evidence], list[int]]:
    """`verify_jobs`, with the indexes of the jobs run in a sandbox now."""
    from verifier.batch import verify_batch

    distinct = {**stored(verifier, jobs, store), **(decided or {})}
    todo = [j for j in range(len(jobs)) if j not in distinct]
    on_result = None if store is None else (lambda _index, ev: store.add(ev))
    fresh = verify_batch(
        verifier,
        [jobs[j] for j in todo],
        workers=workers,
        progress=progress,
        on_result=on_result,
        overloaded_retries=overloaded_retries,
    )
    distinct.update(zip(todo, fresh, strict=True))
    return [distinct[j] for j in range(len(jobs))], todo


@dataclass(frozen=True)
class Part:
    """One run's samples in a batch of several (`run_parts`): `keys[i]` is sample i's task,
    `mapping[i]` its job; `decided`: jobs whose evidence was made before any sandbox;
    `requires`: an earlier part a sample must pass too for its pass here to count (`--plus`:
    base + plus passes when both do, as EvalPlus counts it; a plus suite's evidence is never
    taken for the base verdict)."""

    keys: Sequence[str]
    jobs: list[Job]
    mapping: list[int]
    decided: Mapping[int, Evidence] | None = None
    requires: int | None = None


def run(
    verifier: Verifier,
    keys: Sequence[str],
    jobs: list[Job],
    mapping: list[int],
    *,
    workers: int,
    started: float,
    ks: Iterable[int] = DEFAULT_KS,
    progress: bool = True,
    store: EvidenceStore | None = None,
    decided: Mapping[int, Evidence] | None = None,
    overloaded_retries: int | None = None,
) -> BenchRun:
    """Verify the distinct jobs, then give every sample its job's evidence, pass@k over the
    tasks (`keys[i]`: sample i's task) and the summary every harness reports. `wall_s` counts
    from `started` (`time.monotonic()`): the caller says what its wall time includes. With a
    `store`, jobs it holds a verdict for are served from it (`from_store`), and every other
    job's evidence is appended to it as it arrives (`verified`: the sandbox jobs run)."""
    (one,) = run_parts(
        verifier,
        [Part(keys, jobs, mapping, decided)],
        workers=workers,
        started=started,
        ks=ks,
        progress=progress,
        store=store,
        overloaded_retries=overloaded_retries,
    )
    return one


def run_parts(
    verifier: Verifier,
    parts: Sequence[Part],
    *,
    workers: int,
    started: float,
    ks: Iterable[int] = DEFAULT_KS,
    progress: bool = True,
    store: EvidenceStore | None = None,
    overloaded_retries: int | None = None,
) -> list[BenchRun]:
    """Several runs over the same samples (`--plus`: the base tests and the plus suites) as one
    batch, their jobs taken in turn: no run waits for the slowest job of another before its own
    start, so one sample's time limit overlaps the other jobs instead of ending a pass alone.
    Each part gets its own evidence and summary (`run`'s), `wall_s` the batch's."""
    ks = tuple(ks)
    # The batch: each distinct job once, the parts' jobs in turn. The same candidate against the
    # same suite in two parts (a problem without plus inputs keeps its base suite) is one job.
    batch: list[Job] = []
    decided: dict[int, Evidence] = {}
    seen: dict[tuple[str, int], int] = {}
    where: dict[tuple[int, int], int] = {}  # (part, job) -> batch index
    for j in range(max((len(part.jobs) for part in parts), default=0)):
        for p, part in enumerate(parts):
            if j >= len(part.jobs):
                continue
            candidate, suite = job = part.jobs[j]
            at = seen.setdefault((candidate.sha256, id(suite)), len(batch))
            if at == len(batch):
                batch.append(job)
                if part.decided is not None and j in part.decided:
                    decided[at] = part.decided[j]
            where[p, j] = at
    done, ran = _verify(
        verifier,
        batch,
        workers=workers,
        progress=progress,
        store=store,
        decided=decided,
        overloaded_retries=overloaded_retries,
    )
    wall = time.monotonic() - started
    ran_now = set(ran)
    runs: list[BenchRun] = []
    for p, part in enumerate(parts):
        distinct = [done[where[p, j]] for j in range(len(part.jobs))]
        verified = sum(where[p, j] in ran_now for j in range(len(part.jobs)))  # run now, for it or beside it
        evidence = [distinct[j] for j in part.mapping]
        required = runs[part.requires].evidence if part.requires is not None else evidence
        passed = [ev.ok and earlier.ok for ev, earlier in zip(evidence, required, strict=True)]
        # Judged only where both verdicts are on the model: one the host was too busy to give
        # leaves the sample out of this part's pass@k too.
        judged = [i for i, pair in enumerate(zip(evidence, required, strict=True)) if all(_judged(ev) for ev in pair)]
        summary = _summary(part, distinct, passed, judged, verified, wall, workers, ks)
        runs.append(BenchRun(evidence=evidence, summary=summary))
    return runs


def _judged(ev: Evidence) -> bool:
    """Whether `ev` is a verdict on the model (not the host's being too busy to give one)."""
    return ev.fault is not Fault.HOST


def _summary(
    part: Part,
    distinct: list[Evidence],
    passed: list[bool],
    judged: list[int],
    verified: int,
    wall: float,
    workers: int,
    ks: Iterable[int],
) -> dict[str, Any]:
    """`run`'s summary of one part; `passed`: each sample's verdict, `judged`: the samples whose
    verdict is on the model (`Part.requires` applied to both)."""
    keys = part.keys
    evidence = [distinct[j] for j in part.mapping]
    # A sample the host was too busy to judge is no failure of the model's: pass@k leaves it out
    # (its task then has fewer samples); the summary counts it under "overloaded".
    scores = pass_at_ks([keys[i] for i in judged], [passed[i] for i in judged], ks)
    return {
        "samples": len(evidence),
        "distinct": len(part.jobs),
        "verified": verified,
        "from_store": len(part.jobs) - verified,
        "passed": sum(passed),
        "statuses": status_counts(evidence),
        "infra_errors": infra_errors(evidence),
        "overloaded": stayed_overloaded(evidence),
        "rerun": sum(ev.attempts > 1 for ev in evidence),
        "slot_wait_s": round(sum(ev.durations.queue_s for ev in distinct if not ev.cached), 2),
        "wall_s": round(wall, 2),
        "samples_per_s": round(len(evidence) / wall, 2) if wall > 0 else None,
        "workers": workers,
        **scores.scores,
        "pass@k_not_reported": scores.not_reported,
    }
