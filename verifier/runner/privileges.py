"""Uids and capabilities: a process drops to its uid, keeping the zygote's three capabilities or none."""

from __future__ import annotations

import ctypes
import os
import struct

from .libc import LIBC, PR_SET_KEEPCAPS, prctl

CAP_KILL, CAP_SETGID, CAP_SETUID = 5, 6, 7
#: What the zygote keeps; every other process in the sandbox keeps nothing.
ZYGOTE_CAPS = (1 << CAP_KILL) | (1 << CAP_SETGID) | (1 << CAP_SETUID)
_CAP_VERSION_3 = 0x20080522


def capset(mask: int) -> None:
    """Set the effective and permitted capability sets of this thread to `mask` (low 32 caps)."""
    header = ctypes.create_string_buffer(struct.pack("Ii", _CAP_VERSION_3, 0))
    data = ctypes.create_string_buffer(struct.pack("IIIIII", mask, mask, 0, 0, 0, 0))
    if LIBC.capset(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


def capabilities() -> tuple[int, int]:
    """(effective, permitted) capability masks of this process."""
    eff = prm = -1
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("CapEff:"):
                eff = int(line.split()[1], 16)
            elif line.startswith("CapPrm:"):
                prm = int(line.split()[1], 16)
    return eff, prm


def become(uid: int, *, keep_setuid: bool = False) -> None:
    """Drop to `uid` (and its gid, no groups). With keep_setuid, keep ZYGOTE_CAPS (for the
    zygote); otherwise end with no capability at all, or exit."""
    if keep_setuid:
        prctl(PR_SET_KEEPCAPS, 1)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    keep = ZYGOTE_CAPS if keep_setuid else 0
    capset(keep)
    if keep_setuid:
        prctl(PR_SET_KEEPCAPS, 0)
    if os.getuid() != uid or os.geteuid() != uid or capabilities() != (keep, keep):
        os._exit(70)  # never run anything with privileges we did not mean to keep
