"""Trusted side of the containment probe: every attempt the candidate makes must fail."""

from solution import leaks, whoami


def test_nothing_leaks():
    assert leaks() == []


def test_candidate_runs_unprivileged():
    info = whoami()
    assert type(info) is dict
    assert info["uid"] not in (0, 2000, 2002)
    assert info["cap_eff"] == 0 and info["cap_prm"] == 0
    assert info["no_new_privs"] == 1
