"""Uids and capabilities: a process drops to its uid, keeping the zygote's three capabilities or none."""

from __future__ import annotations

import ctypes
import os
import struct

from .libc import LIBC, PR_SET_KEEPCAPS, prctl
from .procfs import read_bytes, status_field

CAP_KILL, CAP_SETGID, CAP_SETUID = 5, 6, 7
#: What the zygote keeps; every other process in the sandbox keeps nothing.
ZYGOTE_CAPS = (1 << CAP_KILL) | (1 << CAP_SETGID) | (1 << CAP_SETUID)
_CAP_VERSION_3 = 0x20080522


def _capset_args(mask: int) -> tuple[ctypes.Array[ctypes.c_char], ctypes.Array[ctypes.c_char]]:
    header = ctypes.create_string_buffer(struct.pack("Ii", _CAP_VERSION_3, 0))
    data = ctypes.create_string_buffer(struct.pack("IIIIII", mask, mask, 0, 0, 0, 0))
    return header, data


#: capset's arguments for the masks processes here end with, made once, before any fork: a
#: process just forked pays a page copy for every object it touches (docs/performance.md).
_CAPSET_ARGS = {mask: _capset_args(mask) for mask in (0, ZYGOTE_CAPS)}


def capset(mask: int) -> None:
    """Set the effective and permitted capability sets of this thread to `mask` (low 32 caps)."""
    header, data = _CAPSET_ARGS.get(mask) or _capset_args(mask)
    if LIBC.capset(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")


def capabilities() -> tuple[int, int]:
    """(effective, permitted) capability masks of this process; -1 for a mask not found."""
    status = read_bytes("/proc/self/status")
    eff, prm = status_field(status, b"CapEff"), status_field(status, b"CapPrm")
    return (int(eff, 16) if eff else -1), (int(prm, 16) if prm else -1)


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
