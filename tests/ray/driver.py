"""A driver process for the interruption tests: connects to ADDRESS, verifies slow candidates on the
Ray backend with verify_batch, and reports on stdout (one JSON object a line) its nodes, then each
result. The test interrupts it mid-batch. Stdout carries these reports alone: whatever else would
be written there (Ray prints the cluster's messages to every driver there) goes to stderr.

    python -m tests.ray.driver ADDRESS SAMPLES SLEEP_S [LATER_SLEEP_S]

The samples after the first two sleep LATER_SLEEP_S (default SLEEP_S): a test that interrupts
the driver after its first result makes them long, so the batch cannot end before the signal
arrives however slowly the host lets the test run.
"""

from __future__ import annotations

import json
import os
import sys
from typing import TextIO

from verifier import Candidate, Suite
from verifier.batch import Item, verify_batch
from verifier.cluster import RayBackend, ray_verifier
from verifier.suite import Manifest

SLOW_SUITE = Suite(
    files={"test_f.py": b"from solution import f\n\n\ndef test_f():\n    assert f() == 1\n"},
    manifest=Manifest(runner="direct"),
)


def slow_items(count: int, sleep_s: float, later_sleep_s: float | None = None) -> list[Item]:
    """`count` distinct candidates that pass after sleeping `sleep_s` seconds (after the first
    two: `later_sleep_s`, when given)."""
    source = "import time\n\n\ndef f():\n    time.sleep({sleep_s})  # sample {i}\n    return 1\n"
    later = sleep_s if later_sleep_s is None else later_sleep_s
    return [
        (Candidate.from_text(source.format(sleep_s=sleep_s if i < 2 else later, i=i)), SLOW_SUITE) for i in range(count)
    ]


def reports_channel() -> TextIO:
    """This process's stdout, kept for the reports alone. Ray prints what the cluster publishes to
    every driver on the driver's stdout, whatever `log_to_driver` says: on a busy machine a
    raylet's "(raylet) WARNING: 12 PYTHON worker processes have been started on node ...", a
    node marked dead. From here on that, and anything else written to stdout (Python's or a
    library's file descriptor 1), goes to stderr."""
    sys.stdout.flush()
    reports = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return reports


def main(address: str, samples: int, sleep_s: float, later_sleep_s: float | None = None) -> int:
    out = reports_channel()
    items = slow_items(samples, sleep_s, later_sleep_s)
    with ray_verifier(address, per_node=1) as verifier:
        backend = verifier.backend
        assert isinstance(backend, RayBackend)
        nodes = [n.model_dump() for n in backend.nodes]
        print(json.dumps({"nodes": nodes, "backend": backend.id}), file=out, flush=True)

        def report(index: int, ev: object) -> None:
            print(json.dumps({"result": index}), file=out, flush=True)

        verify_batch(verifier, items, workers=backend.slots, progress=False, on_result=report)
    print(json.dumps({"done": True}), file=out, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]) if len(sys.argv) > 4 else None))
