"""Loaded with `-p` into the plain pytest run of a case: Hypothesis as the verifier's runner sets
it (derandomized, no database, no deadline, the suite's `max_examples`, every phase but
`explain`), so that both sides draw the same examples. Nothing else of the run is changed."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, Phase, settings

settings.register_profile(
    "differential-plain",
    derandomize=True,
    database=None,
    deadline=None,
    max_examples=int(os.environ["DIFFERENTIAL_MAX_EXAMPLES"]),
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=False,
    phases=[p for p in Phase if p is not Phase.explain],
)
settings.load_profile("differential-plain")
