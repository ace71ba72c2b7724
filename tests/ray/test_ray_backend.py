"""The Ray backend on a real two-node cluster on this machine: the local pool's evidence, node by
node; a node whose recipe differs is refused; a node killed mid-batch costs no sample and runs no
sample twice; nothing is left behind."""

from __future__ import annotations

import json
import os
import signal
from collections import Counter
from pathlib import Path

import docker
import pytest

from bench.mutants import mutate
from tests.conftest import EXAMPLE, ROOT, SUITE
from tests.ray.cluster import NODE_START_S, LocalRayCluster, ray_node_id
from tests.ray.conftest import alive_nodes, containers_of, named_actors, wait_for
from tests.ray.driver import slow_items
from verifier import Limits, SandboxUnavailable, Status, Verifier
from verifier.batch import Item, verify_batch
from verifier.bench import humaneval as he
from verifier.cluster import RayBackend, ray_verifier
from verifier.limits import PoolConfig

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.xdist_group("ray")]

LIMITS = Limits(timeout_s=30, call_timeout_s=5)


def humaneval_items(problems: int) -> list[Item]:
    """The first problems' canonical solutions and their mutants (as in bench/humaneval_speed.py)."""
    data = he.load_problems()
    samples = []
    for task_id in list(data)[:problems]:
        p = data[task_id].line
        samples.append(he.Sample(task_id, p["canonical_solution"], {}))
        samples.append(he.Sample(task_id, mutate(task_id, p["prompt"], p["canonical_solution"])[0], {}))
    jobs, _ = he.unique_jobs(samples, data)
    return list(jobs)


def backend_of(verifier: Verifier) -> RayBackend:
    backend = verifier.backend
    assert isinstance(backend, RayBackend)
    return backend


def test_same_evidence_as_the_local_pool(
    ray_cluster: LocalRayCluster, sandbox_image: str, docker_client: docker.DockerClient
) -> None:
    examples = [(EXAMPLE / name, SUITE) for name in ("good.py", "buggy_set.py", "wrong/mutates_input.py")]
    items: list[Item] = humaneval_items(6) + examples
    with Verifier.pooled(PoolConfig(policy="reuse", size=2), limits=LIMITS, image=sandbox_image) as local:
        expected = verify_batch(local, items, workers=2, progress=False)
    with ray_verifier(per_node=2, limits=LIMITS, image=sandbox_image) as verifier:
        backend = backend_of(verifier)
        nodes = backend.nodes
        got = verify_batch(verifier, items, workers=backend.slots, progress=False)
        stats = backend.stats()
    statuses = {e.status for e in expected}
    assert Status.PASSED in statuses and Status.FAILED in statuses, "the set must hold both verdicts"
    assert [(e.status, e.evidence_id) for e in got] == [(e.status, e.evidence_id) for e in expected]
    assert [e.counts for e in got] == [e.counts for e in expected]
    assert len(nodes) == 2 and {e.node for e in got} == {n.name for n in nodes}, "every sample names its node"
    assert all(e.isolation == "reuse" for e in got)
    assert (stats.jobs, stats.reruns, stats.lost) == (len(items), 0, [])
    assert wait_for(lambda: named_actors(backend.id) == []), "actors left after close()"
    for node in nodes:
        assert wait_for(lambda node=node: containers_of(docker_client, node.pid) == []), "containers left"


def test_a_suite_with_packages_runs_on_the_nodes_environment(ray_cluster: LocalRayCluster, sandbox_image: str) -> None:
    """Issue 24 §1: every node finds (or builds) the suite's environment image, one digest for
    all, and the evidence names it exactly as a local pool's does."""
    frames = ROOT / "examples" / "dataframes"
    with Verifier.pooled(PoolConfig(policy="reuse", size=1), limits=LIMITS, image=sandbox_image) as local:
        expected = local.check(frames / "good.py", frames / "suite")
    with ray_verifier(per_node=1, limits=LIMITS, image=sandbox_image) as verifier:
        got = verifier.check(frames / "good.py", frames / "suite")
        wrong = verifier.check(frames / "wrong" / "sample_std.py", frames / "suite")
    assert expected.ok and got.ok, (expected.reason, got.reason)
    assert got.environment is not None and got.environment == expected.environment
    assert got.evidence_id == expected.evidence_id and got.node != expected.node
    assert wrong.status is Status.FAILED and wrong.environment == got.environment


def test_a_node_with_another_recipe_is_refused(ray_cluster: LocalRayCluster, sandbox_image: str) -> None:
    with pytest.raises(SandboxUnavailable) as refused:
        RayBackend(recipe="0" * 64, image=sandbox_image, limits=LIMITS, per_node=1)
    message = str(refused.value)
    assert message.startswith("no Ray node can verify")
    assert message.count("the driver 0000000000000000") == alive_nodes() == 2, message
    assert wait_for(lambda: named_actors("") == []), "refused nodes' actors must end"


def test_a_node_killed_mid_batch_loses_no_sample_and_runs_none_twice(
    ray_cluster: LocalRayCluster, sandbox_image: str, docker_client: docker.DockerClient
) -> None:
    victim = ray_cluster.add_node("victim")
    try:
        assert wait_for(lambda: alive_nodes() == 3, NODE_START_S), "the third node did not join"
        victim_id = ray_node_id(victim)
        items = slow_items(24, 1.0)
        seen: Counter[int] = Counter()
        with ray_verifier(per_node=1, limits=LIMITS, image=sandbox_image) as verifier:
            backend = backend_of(verifier)
            (gone,) = [n for n in backend.nodes if n.node_id == victim_id]
            assert backend.warm_up() == 3

            def on_result(index: int, _ev: object) -> None:
                seen[index] += 1
                if len(seen) == 3:  # mid-batch: every node holds jobs
                    ray_cluster.kill_raylet(victim)

            evidence = verify_batch(verifier, items, workers=backend.slots, progress=False, on_result=on_result)
            stats = backend.stats()
        assert sorted(seen) == list(range(len(items))) and set(seen.values()) == {1}, "one result per sample"
        assert [e.status for e in evidence] == [Status.PASSED] * len(items), [e.reason for e in evidence]
        assert stats.jobs == len(items), "every job answered by exactly one node"
        assert [x.name for x in stats.lost] == [gone.name]
        # Rerun: the jobs the victim held when it was found dead; never more than it may hold.
        assert 1 <= stats.reruns <= 2, stats
        # Its actor died without closing its pool: the lifeline removed the containers.
        assert wait_for(lambda: containers_of(docker_client, gone.pid) == []), "the lost node's containers remain"
    finally:
        ray_cluster.stop_node(victim)
        ray_cluster.nodes.remove(victim)


def test_a_killed_actor_leaves_no_container(
    ray_cluster: LocalRayCluster, sandbox_image: str, docker_client: docker.DockerClient
) -> None:
    with ray_verifier(per_node=1, limits=LIMITS, image=sandbox_image) as verifier:
        backend = backend_of(verifier)
        assert backend.warm_up() == 2
        node, survivor = backend.nodes
        assert len(containers_of(docker_client, node.pid)) == 1
        os.kill(node.pid, signal.SIGKILL)  # no Python code of the actor runs again
        assert wait_for(lambda: containers_of(docker_client, node.pid) == []), "the lifeline did not clean up"
        # The next job goes to the killed node (both have sent none: the first is chosen), is lost
        # there, and is rerun on the other node.
        ev = verifier.check(EXAMPLE / "good.py", SUITE)
        stats = backend.stats()
    assert ev.ok and ev.node == survivor.name
    assert stats.reruns == 1 and [x.name for x in stats.lost] == [node.name]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill"])
def test_an_interrupted_driver_leaves_no_actor_and_no_container(
    ray_cluster: LocalRayCluster, docker_client: docker.DockerClient, sig: signal.Signals, tmp_path: Path
) -> None:
    import subprocess
    import sys

    import ray

    root = Path(__file__).resolve().parents[2]
    # Two quick samples, then 22 of 5 s: the batch cannot end before the signal, however slowly
    # a busy host lets this test read the first result and send it.
    cmd = [sys.executable, "-m", "tests.ray.driver", ray_cluster.address, "24", "0.5", "5"]
    errors = tmp_path / "driver.err"  # a file, not a pipe nobody drains while the test reads stdout
    # What a busy raylet sends every driver ("too many worker processes"); Ray prints it on the
    # driver's stdout, which once broke the reports read below (JSONDecodeError under load).
    warning = f"WARNING: the test's stand-in for a busy raylet's warning {os.getpid()}-{sig.name}"
    with errors.open("wb") as err:
        driver = subprocess.Popen(
            cmd,
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=err,
            # As in a terminal: a shell's background job (nohup ... &) starts with SIGINT
            # ignored, and Python then never raises KeyboardInterrupt.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
    try:
        assert driver.stdout is not None
        started = json.loads(driver.stdout.readline() or "{}")
        assert "nodes" in started, errors.read_text()
        ray._private.utils.push_error_to_driver(ray._private.worker.global_worker, "worker_pool_large", warning)
        assert wait_for(lambda: warning in errors.read_text()), "the cluster's message is not on the driver's stderr"
        assert "result" in json.loads(driver.stdout.readline() or "{}")  # a first result: mid-batch
        driver.send_signal(sig)
        out, _ = driver.communicate(timeout=600)  # a bound against a hang; cleanup is slow on a busy host
    finally:
        if driver.poll() is None:
            driver.kill()
    assert driver.returncode != 0 and b'"done"' not in out
    assert all("result" in json.loads(line) for line in out.splitlines()), out  # stdout: the reports alone
    pids = [n["pid"] for n in started["nodes"]]
    assert len(pids) == 2
    assert wait_for(lambda: named_actors(started["backend"]) == []), "actors left behind"
    assert wait_for(lambda: not any(os.path.exists(f"/proc/{pid}") for pid in pids)), "actor processes remain"
    for pid in pids:
        assert wait_for(lambda pid=pid: containers_of(docker_client, pid) == []), "containers left behind"
