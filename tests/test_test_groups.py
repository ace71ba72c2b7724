"""The suite's `xdist_group` marks take effect.

Modules with an expensive module fixture (a Ray cluster, a server, the differential corpus, a
batch of reviews) are marked `xdist_group` so that one worker runs them and their fixture runs
once. With `--dist loadgroup` pytest-xdist puts the group's name in each marked test's id; when
that stops working (pytest 9.2 with pytest-xdist 3.8 ignored it silently, and every such fixture
ran once per worker), this test fails.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.xdist_group("groups-guard")


def test_a_marked_test_carries_its_group_under_loadgroup(request: pytest.FixtureRequest) -> None:
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("not an xdist worker under --dist loadgroup")
    assert request.node.nodeid.endswith("@groups-guard"), request.node.nodeid
