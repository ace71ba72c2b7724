"""Trusted side of the containment probe: every attempt the candidate makes must fail."""

import ctypes
import os

from solution import leaks, whoami
from verifier_runner import protocol

#: Where the trusted side keeps what the candidate must not reach, from the runner's own
#: protocol module (never restated here: a moved directory would make the probe pass vacuously).
PLACES = {
    "trusted_dir": protocol.TRUSTED_DIR,
    "suite_file": f"{protocol.SUITE_DIR}/test_probe.py",
    "zygote_uid": protocol.ZYGOTE_UID,
}

#: What gVisor's /proc lets every process see of another user's processes: their environment
#: (world-readable there) and their fd numbers (nothing can be opened through them; the probe
#: tries). The environment is the runner's fixed one (the probe checks that too); see "Under
#: gVisor" in docs/architecture.md. Every other attempt must fail under gVisor as under runc.
GVISOR_PROC_EXPOSURES = ("environ of ", "fds of ")


def _gvisor():
    """gVisor's kernel log starts with its name; Linux refuses an unprivileged read of its own."""
    buf = ctypes.create_string_buffer(256)
    size = ctypes.CDLL(None).klogctl(3, buf, len(buf))  # SYSLOG_ACTION_READ_ALL
    return size > 0 and b"gVisor" in buf.raw[:size]


def test_the_places_probed_are_real():
    """The trusted side sees what the probe attacks, so an attempt that fails is a refusal."""
    assert os.getuid() == protocol.TRUSTED_UID
    assert os.path.isfile(PLACES["suite_file"]) and os.path.isfile(f"{protocol.TRUSTED_DIR}/pytest.ini")


def test_nothing_leaks():
    found = leaks(PLACES)
    if _gvisor():
        found = [leak for leak in found if not leak.startswith(GVISOR_PROC_EXPOSURES)]
    assert found == []


def test_candidate_runs_unprivileged():
    info = whoami()
    assert type(info) is dict
    assert info["uid"] == protocol.CANDIDATE_UID
    assert info["cap_eff"] == 0 and info["cap_prm"] == 0
    assert info["no_new_privs"] == 1
