"""The seccomp filter of candidate processes under gVisor: it refuses what a reset could not undo."""

from __future__ import annotations

import ctypes
import errno
import os

from .libc import LIBC


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_SockFilter))]


#: os.uname().machine -> (AUDIT_ARCH_*, mq_open, setpriority, sched_setaffinity syscall numbers).
_GUARDED = {"x86_64": (0xC000003E, 240, 141, 203), "aarch64": (0xC00000B7, 180, 140, 122)}
_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 22, 2
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000
_LD, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_JMP|JGE|K, BPF_RET|K
#: Syscall numbers from here on are x32's (x86_64's ILP32 ABI, same AUDIT_ARCH); none is allowed.
_X32_SYSCALL_BIT = 0x40000000


def gvisor_guard() -> None:
    """Under gVisor, keep a candidate process (and its children) from what gVisor's kernel allows
    but a reset could not undo, with a seccomp filter (needs no_new_privs, which the container sets):

    - another ABI than the host's (i386), and the x32 syscall range (nr >= 0x40000000) of the host
      ABI: the numbers below would not match there; EACCES.
    - mq_open: gVisor mounts no /dev/mqueue, so no reset could see or remove a queue; EACCES.
    - setpriority and sched_setaffinity of another process: gVisor checks no permission there
      (it stores the values); EPERM unless the target is the caller itself (0).
    """
    arch, mq_open, setpriority, setaffinity = _GUARDED[os.uname().machine]
    deny, no = _RET_ERRNO | errno.EACCES, _RET_ERRNO | errno.EPERM
    program = [
        (_LD, 0, 0, 4),  # 0: seccomp_data.arch
        (_JEQ, 0, 11, arch),  # 1: another ABI -> 13 (deny)
        (_LD, 0, 0, 0),  # 2: seccomp_data.nr
        (_JGE, 9, 0, _X32_SYSCALL_BIT),  # 3: the x32 range -> 13 (deny)
        (_JEQ, 8, 0, mq_open),  # 4: -> 13 (deny)
        (_JEQ, 1, 0, setpriority),  # 5: -> 7 (its `who`)
        (_JEQ, 2, 4, setaffinity),  # 6: -> 9 (its `pid`), else -> 11 (allow)
        (_LD, 0, 0, 24),  # 7: args[1], low half
        (_JEQ, 2, 3, 0),  # 8: 0 -> 11 (allow), else -> 12 (EPERM)
        (_LD, 0, 0, 16),  # 9: args[0], low half
        (_JEQ, 0, 1, 0),  # 10: 0 -> 11 (allow), else -> 12 (EPERM)
        (_RET, 0, 0, _RET_ALLOW),  # 11
        (_RET, 0, 0, no),  # 12
        (_RET, 0, 0, deny),  # 13
    ]
    filters = (_SockFilter * len(program))(*(_SockFilter(*insn) for insn in program))
    fprog = _SockFprog(len(program), filters)
    if LIBC.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp filter failed")
