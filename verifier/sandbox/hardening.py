"""Pure: limits -> the Docker create-container arguments that enforce them.

Every promise of the threat model that the engine keeps is one line here, so a review
of containment starts and ends in this file.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from docker.types import LogConfig, Ulimit

from verifier.limits import Limits
from verifier.runner.protocol import CANDIDATE_UID, KERNEL_ENV, SCRATCH_DIR, TRUSTED_DIR, TRUSTED_UID
from verifier.sandbox.backend import SandboxJob
from verifier.sandbox.runtime import engine_name

LABEL_MANAGED = "org.verifier.managed"
LABEL_OWNER_PID = "org.verifier.owner-pid"
LABEL_OWNER_HOST = "org.verifier.owner-host"
LABEL_OWNER_START = "org.verifier.owner-start"
#: On a lasting agent sandbox (one that outlives its maker): its idle timeout in seconds. Such a
#: container is not judged by its owner's life but by its own: it stops itself when idle, and
#: `verifier gc` removes it (and its workspace volume) once it has stopped.
LABEL_IDLE_TIMEOUT = "org.verifier.idle-timeout-s"

#: Capabilities of the launcher (root) in launcher mode; see verifier/runner/launch.py.
LAUNCHER_CAPS = ("SETUID", "SETGID", "KILL")
#: /dev/shm's size: a tmpfs that, like the scratch dir, is memory that outlives processes.
SHM_BYTES = 16 * 1024**2

#: Under gVisor the engine's pids limit counts the sandbox kernel's own host processes and
#: threads: its ptrace platform backs every sandbox process with a host process of about five
#: threads (measured), and a sandbox that hits the limit crashes as a whole instead of failing
#: the candidate's fork. So there the engine's limit is this roomy, and the sandbox's own limit on
#: processes is RLIMIT_NPROC, which gVisor's kernel keeps per uid inside the sandbox. (Under runc
#: RLIMIT_NPROC would count that uid's processes in every container on the host.)
GVISOR_HOST_PIDS_BASE = 128
GVISOR_HOST_PIDS_PER_PROCESS = 16

SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def _tmpfs(limits: Limits, owner: int | None, mode: str) -> str:
    opts = f"rw,nosuid,nodev,size={limits.scratch_bytes},mode={mode}"
    if owner is not None:
        opts += f",uid={owner},gid={owner}"
    return opts


def _host_pids(limits: Limits) -> int:
    """The engine's pids limit: the sandbox's processes and threads (runc), or room for gVisor's
    host processes behind them (gVisor, where RLIMIT_NPROC bounds the sandbox's own)."""
    if limits.runtime == "gvisor":
        return GVISOR_HOST_PIDS_BASE + GVISOR_HOST_PIDS_PER_PROCESS * limits.pids
    return limits.pids


def _process_ulimits(limits: Limits) -> list[Ulimit]:
    if limits.runtime == "gvisor":
        return [Ulimit(name="nproc", soft=limits.pids, hard=limits.pids)]
    return []


def ipc_sysctls(limits: Limits) -> dict[str, str]:
    """Bounds on the container's own IPC namespace: SysV objects are kernel memory that outlives
    the process that made it, so they get no more room than the scratch space."""
    pages = max(1, limits.scratch_bytes // 4096)
    return {
        "kernel.shmmax": str(limits.scratch_bytes),
        "kernel.shmall": str(pages),
        "kernel.shmmni": "64",
        "kernel.msgmni": "32",
        "kernel.msgmax": "8192",
        "kernel.msgmnb": "16384",
    }


def container_kwargs(job: SandboxJob, labels: Mapping[str, str]) -> dict[str, Any]:
    """Arguments for `APIClient.create_container` (host_config included) for `job`."""
    limits = job.limits
    if job.mode == "launcher":
        user = "0:0"  # only to split into two unprivileged users; see verifier/runner/launch.py
        # SETUID/SETGID: the zygote's children become the candidate's uid; KILL: the zygote
        # (another uid than the candidates, so they cannot reach it) kills the candidate
        # processes it made. The trusted side and the candidates keep no capability at all.
        cap_add = list(LAUNCHER_CAPS)
        tmpfs = {
            SCRATCH_DIR: _tmpfs(limits, CANDIDATE_UID, "0700"),
            TRUSTED_DIR: _tmpfs(limits, TRUSTED_UID, "0700"),
        }
    else:
        user = f"{TRUSTED_UID}:{TRUSTED_UID}"
        cap_add = []
        tmpfs = {SCRATCH_DIR: _tmpfs(limits, None, "1777")}
    host_config: dict[str, Any] = {
        "network_mode": "none",  # no interface but loopback
        "mem_limit": limits.memory_bytes,
        "memswap_limit": limits.memory_bytes,  # equal to mem_limit: no swap
        "nano_cpus": int(limits.cpus * 1e9),
        "pids_limit": _host_pids(limits),  # fork and thread bombs stop here (and see _host_pids)
        "read_only": True,  # root file system
        "tmpfs": tmpfs,
        "cap_drop": ["ALL"],
        "cap_add": cap_add,
        "security_opt": ["no-new-privileges"],
        "ulimits": [
            Ulimit(name="nofile", soft=limits.open_files, hard=limits.open_files),
            Ulimit(name="fsize", soft=limits.file_size_bytes, hard=limits.file_size_bytes),
            Ulimit(name="core", soft=0, hard=0),
            *_process_ulimits(limits),
        ],
        # Plain jobs get tini as PID 1 to reap orphans. Launcher jobs do not: tini would stay
        # root (with the launcher's capabilities) for the container's life; there the trusted server is
        # PID 1 and the zygote is the candidates' subreaper.
        "init": job.mode == "plain",
        "ipc_mode": "private",
        "shm_size": min(limits.scratch_bytes, SHM_BYTES),
        "sysctls": ipc_sysctls(limits),
        # Output reaches us through the attach stream only; never written to the host's disk.
        "log_config": LogConfig(type=LogConfig.types.NONE),
        "auto_remove": False,  # we remove it ourselves after reading its state
        # Always by name, runc too: the engine's default runtime may be another one, and an
        # unknown name fails the create instead of falling back (see verifier/sandbox/runtime.py).
        "runtime": engine_name(limits.runtime),
    }
    environment = {"PATH": SAFE_PATH, "HOME": SCRATCH_DIR, "LANG": "C.UTF-8"}
    if limits.runtime == "gvisor":
        environment[KERNEL_ENV] = "gvisor"  # the runner guards candidates against gVisor's gaps
    return {
        "user": user,
        "environment": environment,
        "working_dir": SCRATCH_DIR,
        "network_disabled": True,
        "stdin_open": True,  # docker-py sets StdinOnce with it: our EOF closes the job's stdin
        "use_config_proxy": False,  # never inject the host's proxy settings into the sandbox
        "tty": False,
        "labels": dict(labels),
        "host_config": host_config,
    }
