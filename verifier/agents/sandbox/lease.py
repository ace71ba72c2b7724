"""How a lasting agent sandbox (`DockerSandbox(idle_timeout_s=...)`) knows it is idle, and ends.

A lasting sandbox outlives the process that made it, so nothing on the host can be trusted to
end it: its owner may have crashed, and the process that would reconnect may never come. So it
ends itself. Its keep-alive is a watchdog (PID 2 under the engine's init, as the keeper user):
a loop that ends, and with it the container, once the **lease** has run out by the idle timeout.

The lease is the modification time of one file on a tmpfs only the keeper (uid 65534) can
write (`LEASE_DIR`, mode 0700): "in use until". Every host process that uses the sandbox moves
it forward (`renew_command`, an exec as the keeper) before a command or a file transfer, to
the end of that command's deadline plus a margin, never backward (several processes may share
one sandbox). Why a file and not a label: labels are fixed when a container is made. Why the
keeper's file: the agent's processes (uid 2000) can neither write it nor signal the watchdog,
so an agent cannot keep its sandbox alive by itself (a `setsid` daemon that loops forever
still ends with the container). Why not the engine's exec events: the engine keeps only the
last 256 events, which a busy machine's verifications roll over within seconds.

The host does not write the lease before every call: `LeaseClock` remembers how far its last
write reaches and writes again only when a new call's deadline passes it, so a busy session
pays one small exec about every `renew_s`. The price: a sandbox may live up to the last call's
time limit plus `renew_s` longer than `idle_timeout_s` after its last use.

Once the container has stopped (the watchdog ended, or the engine restarted), `verifier gc`
removes it and its workspace volume (`verifier.sandbox.gc.orphaned`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from verifier.agents.sandbox.files import PYTHON

#: The keeper's own tmpfs: the lease lives here.
LEASE_DIR = "/run/verifier-keeper"
LEASE = f"{LEASE_DIR}/lease"
#: Mount options of LEASE_DIR (uid 65534 is the keeper: see box.KEEPER_UID).
LEASE_TMPFS = "rw,nosuid,nodev,noexec,size=65536,uid=65534,gid=65534,mode=0700"
#: Bounds of an idle timeout (seconds).
MIN_IDLE_S = 1.0
MAX_IDLE_S = 7 * 24 * 3600.0
#: The most a lease is written ahead of a call's own deadline.
MAX_RENEW_S = 60.0

#: argv[1] the lease, argv[2] the idle timeout, argv[3] the pause between looks. The lease is
#: written once at start (starting is a use; never moved back); the loop then only reads it. No new process is
#: ever started, so a full pids limit cannot make it spin.
_WATCHDOG = r"""
import os, sys, time
lease, idle, pause = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
with open(lease, 'a'):
    pass
if os.stat(lease).st_mtime < time.time():
    os.utime(lease)
while True:
    try:
        until = os.stat(lease).st_mtime
    except OSError:
        until = 0.0
    left = until + idle - time.time()
    if left <= 0:
        sys.exit(0)
    time.sleep(min(pause, left))
"""

#: $1 seconds ahead. Moves the lease forward to now + $1 (the container's clock), never back.
_RENEW = r"""n=$(( $(date +%s) + $1 ))
c=$(stat -c %Y "$2" 2>/dev/null || echo 0)
[ "$n" -le "$c" ] || touch -d "@$n" "$2"
"""


def pause_s(idle_s: float) -> float:
    """How often the watchdog looks at the lease: a tenth of the timeout, within 0.2-5 s."""
    return min(5.0, max(0.2, idle_s / 10))


def watchdog_command(idle_s: float) -> tuple[str, ...]:
    """The keep-alive of a lasting sandbox: ends when the lease has run out by `idle_s`."""
    return (*PYTHON, _WATCHDOG, LEASE, f"{idle_s:.3f}", f"{pause_s(idle_s):.3f}")


def renew_command(ahead_s: float) -> list[str]:
    """Moves the lease to at least `ahead_s` seconds from now, never back (`date +%s` drops the
    fraction of the current second: one second more makes up for it)."""
    return ["/bin/sh", "-c", _RENEW, "verifier-lease", str(math.ceil(ahead_s) + 1), LEASE]


def check_idle_timeout(idle_s: float) -> float:
    """`idle_s` as a float, or ValueError naming the allowed range."""
    if isinstance(idle_s, bool) or not isinstance(idle_s, int | float) or not math.isfinite(idle_s):
        raise ValueError(f"idle_timeout_s must be a number of seconds, got {idle_s!r}")
    if not MIN_IDLE_S <= idle_s <= MAX_IDLE_S:
        raise ValueError(f"idle_timeout_s must be between {MIN_IDLE_S:g} and {MAX_IDLE_S:g} seconds, got {idle_s:g}")
    return float(idle_s)


@dataclass
class LeaseClock:
    """The host's side of one process's lease writes (monotonic clock): how far the last write
    reaches, and whether a call that needs `need_s` seconds must write again."""

    idle_s: float
    covered: float = field(default=-math.inf)
    """Host monotonic time up to which this process's last write holds the sandbox."""

    @property
    def renew_s(self) -> float:
        """How far past a call's own deadline a write reaches: a quarter of the idle timeout, at
        most MAX_RENEW_S (so writes are rare, and an abandoned sandbox is not kept long)."""
        return min(MAX_RENEW_S, self.idle_s / 4)

    def ahead(self, need_s: float, now: float) -> float | None:
        """Seconds ahead to write before a call that may take `need_s` seconds, started at host
        time `now`; None when the last write already covers it."""
        if now + need_s <= self.covered:
            return None
        return need_s + self.renew_s

    def written(self, at: float, ahead_s: float) -> None:
        """A write of `ahead_s`, asked for at host time `at` (before the exec: the container's
        clock read later, so the lease reaches at least this far)."""
        self.covered = max(self.covered, at + ahead_s)
