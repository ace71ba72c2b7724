"""Programs in other languages on the Ray backend (issue 36): every node finds the one language
image, and the corpus' `sum` problem (a correct solution and every kind of wrong one, in every
language) gets on the session's real two-node cluster the statuses it gets on a local pool
(tests/programs/test_languages_docker.py, where they are also the plain judge's)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import docker
import pytest

from tests.programs import language_corpus as corpus
from tests.ray.cluster import LocalRayCluster
from verifier import Candidate, Limits
from verifier.cluster import RayBackend, ray_verifier
from verifier.evidence import Evidence

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.xdist_group("ray")]

LIMITS = Limits(timeout_s=60)


def test_every_language_gets_its_statuses_on_the_clusters_nodes(
    ray_cluster: LocalRayCluster, sandbox_image: str, docker_client: docker.DockerClient, tmp_path: Path
) -> None:
    from verifier.sandbox.image import language_image

    image = language_image(docker_client, "c")  # built once (minutes) before the nodes look for it
    suite = corpus.write_suite(tmp_path / "sum", "sum")
    solutions = [s for s in corpus.SOLUTIONS if s.problem == "sum"]
    assert {s.language for s in solutions} == set(corpus.LANGUAGES)
    with ray_verifier(per_node=1, limits=LIMITS, image=sandbox_image) as verifier:
        backend = verifier.backend
        assert isinstance(backend, RayBackend)
        nodes = {n.name for n in backend.nodes}

        def check(sol: corpus.Solution) -> Evidence:
            return verifier.check(Candidate.from_text(sol.source), suite, language=sol.language)

        with ThreadPoolExecutor(backend.slots) as workers:
            got = list(workers.map(check, solutions))
        stats = backend.stats()
    wrong = [(s.language, s.note, s.expect, ev.status.value, ev.reason) for s, ev in zip(solutions, got, strict=True)]
    assert [w for w in wrong if w[2] != w[3]] == []
    ran = [ev for ev in got if ev.node is not None]  # a Python syntax error is refused before any sandbox
    assert len(nodes) == 2 and {ev.node for ev in ran} == nodes, "both nodes ran programs"
    assert len(ran) >= len(solutions) - 1
    for sol, ev in zip(solutions, got, strict=True):
        if sol.language != "python":
            assert ev.program is not None and ev.program.language == sol.language and ev.program.toolchain
            assert ev.image_id == image.image_id
    assert (stats.jobs, stats.reruns, stats.lost) == (len(ran), 0, [])
