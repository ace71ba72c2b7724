"""The charged clock: wall-clock time minus the time the sandbox spent waiting for a CPU on a
busy host. Time limits (`timeout_s`, `call_timeout_s`) are measured on it, so a correct
candidate does not fail because other work kept the host's CPUs busy.

Over each interval between samples the clock reads

- how long the trusted test thread and the current candidate process were runnable but not
  running (their run delay, from /proc/PID/schedstat), and
- how much CPU the whole sandbox used (its cgroup's cpuacct / cpu.stat), against its quota.

When the sandbox used less than half its CPU quota while one of them waited to run, the
waiting was caused from outside (other containers, other programs): that wait is credited,
not charged. When the sandbox itself used its quota (a candidate spinning many threads), or
the candidate was sleeping or blocked, nothing is credited: that time is the candidate's.
Past `OVERLOAD_FACTOR` times a limit in wall-clock time, a run that is still short of its
charged limit is given up as `overloaded`, never as a timeout.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable

#: pytest leaves this module's frames out of a failure's text (it reads `__tracebackhide__` from
#: a frame's globals too): they are the verifier's, not the test's or the candidate's doing.
__tracebackhide__ = True

#: Sample at most this often (reading the counters costs a few tens of microseconds).
MIN_INTERVAL_S = 0.02
#: Below this share of its CPU quota, the sandbox was not the one keeping its CPUs busy.
STARVED_SHARE = 0.5
#: Above this fraction of the machine's CPU time in use, the machine has no CPU to spare.
HOST_BUSY = 0.9


def _read(path: str) -> str | None:
    try:
        with open(path) as fh:
            return fh.read()
    except OSError:
        return None


def sandbox_cpu_s() -> float | None:
    """CPU time used by this container's cgroup so far (cgroups v1 or v2), or None."""
    usage = _read("/sys/fs/cgroup/cpuacct/cpuacct.usage")
    if usage is not None:
        return int(usage) / 1e9
    stat = _read("/sys/fs/cgroup/cpu.stat")
    if stat is not None:
        for line in stat.splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec":
                return int(value) / 1e6
    return None


@functools.cache
def sandbox_cpus() -> float:
    """This container's CPU quota in CPUs (the number of CPUs when unlimited); read once per
    process: the quota is set when the container is created and nothing here changes it."""
    quota, period = _read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), _read("/sys/fs/cgroup/cpu/cpu.cfs_period_us")
    if quota is not None and period is not None and int(quota) > 0:
        return int(quota) / int(period)
    limit = _read("/sys/fs/cgroup/cpu.max")
    if limit is not None and not limit.startswith("max"):
        q, p = limit.split()
        return int(q) / int(p)
    return float(os.cpu_count() or 1)


def host_cpu_jiffies() -> tuple[int, int] | None:
    """(busy, total) CPU time of the whole machine so far, from /proc/stat (not namespaced)."""
    text = _read("/proc/stat")
    if not text:
        return None
    values = [int(v) for v in text.splitlines()[0].split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    return sum(values) - idle, sum(values)


def starved_now(container_cpu_s: Callable[[], float | None], cpus: float, sample_s: float = 0.5) -> bool:
    """Whether, right now, the machine's CPUs are all busy while this sandbox gets less than half
    its quota: other work keeps it waiting. A sandbox that uses its quota (a candidate spinning
    many threads) or sleeps on an idle machine is not starved; the load average is not used,
    because a candidate's own runnable processes would raise it.
    """
    host0, cpu0 = host_cpu_jiffies(), container_cpu_s()
    time.sleep(sample_s)
    host1, cpu1 = host_cpu_jiffies(), container_cpu_s()
    if host0 is None or host1 is None or cpu0 is None or cpu1 is None or host1[1] <= host0[1]:
        return False
    host_busy = (host1[0] - host0[0]) / (host1[1] - host0[1])
    share = (cpu1 - cpu0) / (sample_s * cpus)
    return host_busy > HOST_BUSY and share < STARVED_SHARE


def run_delay_s(pid: int | str) -> float:
    """How long the thread `pid` has been runnable but waiting for a CPU, in total."""
    text = _read(f"/proc/{pid}/schedstat")
    try:
        return int(text.split()[1]) / 1e9 if text else 0.0
    except (IndexError, ValueError):
        return 0.0


class ChargedClock:
    def __init__(self) -> None:
        self.cpus = sandbox_cpus()
        self.start = time.monotonic()
        self.credit = 0.0
        self._watched: int | None = None
        self._last = self._sample()

    def _sample(self) -> tuple[float, float | None, float, float]:
        watched = run_delay_s(self._watched) if self._watched is not None else 0.0
        return time.monotonic(), sandbox_cpu_s(), run_delay_s("thread-self"), watched

    def watch(self, pid: int | None) -> None:
        """Also count the run delay of process `pid` (the candidate process serving calls)."""
        self.tick(force=True)
        self._watched = pid
        self._last = self._sample()

    def tick(self, force: bool = False) -> None:
        if not force and time.monotonic() - self._last[0] < MIN_INTERVAL_S:
            return
        now = self._sample()
        t0, cpu0, mine0, theirs0 = self._last
        t1, cpu1, mine1, theirs1 = now
        self._last = now
        elapsed = t1 - t0
        if elapsed <= 0 or cpu0 is None or cpu1 is None:
            return
        share = (cpu1 - cpu0) / (elapsed * self.cpus)
        if share < STARVED_SHARE:
            self.credit += min(max(mine1 - mine0, theirs1 - theirs0, 0.0), elapsed)

    def wall(self) -> float:
        return time.monotonic() - self.start

    def charged(self) -> float:
        """Time charged so far: wall-clock time minus credited waiting."""
        self.tick()
        return self.wall() - self.credit
