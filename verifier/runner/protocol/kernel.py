"""The kernel probe: which kernel a runner observes under it (gVisor's or the host's Linux)."""

from __future__ import annotations

import functools

#: syslog(2) SYSLOG_ACTION_READ_ALL: read the kernel's log without consuming it.
_SYSLOG_READ_ALL = 3
#: The first line of gVisor's kernel log (its Sentry writes it at boot; no other kernel does).
_GVISOR_LOG = b"Starting gVisor..."


@functools.cache
def observed_kernel() -> str:
    """The kernel this process runs on, as it observes it: "gvisor" or "linux".

    gVisor's kernel lets any process read its log, which begins with "Starting gVisor...". Under
    runc the log is the host kernel's, which a process without CAP_SYSLOG cannot read at all
    (Docker's seccomp profile and dmesg_restrict refuse it), and which never holds that line.
    So a sandbox named gVisor that is really runc (a `runsc` registered pointing at runc)
    reports "linux", whatever the host asked for. The environment (`KERNEL_ENV`) is what the
    host asked, never the evidence of what ran. Observed once per process: a process's kernel
    does not change under it.
    """
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        buffer = ctypes.create_string_buffer(4096)
        size = int(libc.klogctl(_SYSLOG_READ_ALL, buffer, len(buffer)))
    except (OSError, AttributeError):
        return "linux"
    return "gvisor" if size > 0 and _GVISOR_LOG in buffer.raw[:size] else "linux"
