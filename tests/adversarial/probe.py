"""An honest candidate that tries to break out and reports what worked (run by test_forgery)."""

import ctypes
import errno
import os
import resource
import signal
import socket

#: The start-up environment of the container's processes (hardening.py's and the image's).
CONTAINER_ENVIRONMENT = {
    b"PATH",
    b"HOME",
    b"LANG",
    b"TZ",
    b"PYTHONHASHSEED",
    b"PYTHONDONTWRITEBYTECODE",
    b"PYTHONUNBUFFERED",
    b"VERIFIER_SANDBOX_KERNEL",
}


def _status(pid="self"):
    out = {}
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            out[key] = value.strip()
    return out


def whoami():
    status = _status()
    return {
        "uid": os.getuid(),
        "cap_eff": int(status["CapEff"], 16),
        "cap_prm": int(status["CapPrm"], 16),
        # prctl, not /proc/self/status: gVisor's status has no NoNewPrivs line.
        "no_new_privs": ctypes.CDLL(None).prctl(39, 0, 0, 0, 0),  # PR_GET_NO_NEW_PRIVS
    }


def _other_uid_pids():
    """Processes of every other user: the trusted side and the zygote."""
    me = os.getuid()
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if int(_status(entry)["Uid"].split()[0]) != me:
                    pids.append(int(entry))
            except (OSError, KeyError, ValueError):
                pass
    return pids


def leaks(places):
    """What worked. `places`: where the trusted side keeps its files and which uid the zygote
    has, as the runner's protocol module says (the trusted test passes them in, so the probe
    follows them if they move instead of passing vacuously)."""
    found = []
    trusted_dir, suite_file, zygote_uid = places["trusted_dir"], places["suite_file"], places["zygote_uid"]

    def attempt(name, fn):
        try:
            fn()
        except Exception:
            return
        found.append(name)

    def read(path):
        with open(path, "rb") as fh:
            fh.read(1)

    def connect_anywhere():
        # No interface but loopback and no route: nothing to aim at, so aim at nothing.
        with open("/proc/net/dev") as fh:
            interfaces = {line.split(":")[0].strip() for line in fh if ":" in line}
        with open("/proc/net/route") as fh:
            routes = fh.read().splitlines()[1:]
        if interfaces != {"lo"} or routes:
            return  # an interface or a route: a leak
        raise OSError("only loopback")

    others = _other_uid_pids()
    if not others:
        found.append("no trusted process found: the probe checked nothing")
    attempt("list trusted dir", lambda: os.listdir(trusted_dir))
    attempt("read suite", lambda: read(suite_file))
    attempt("read trusted pytest.ini", lambda: read(f"{trusted_dir}/pytest.ini"))
    attempt("write trusted dir", lambda: open(f"{trusted_dir}/x", "w").close())
    attempt("write root fs", lambda: open("/usr/x", "w").close())
    attempt("read shadow", lambda: read("/etc/shadow"))
    attempt("docker socket", lambda: socket.socket(socket.AF_UNIX).connect("/var/run/docker.sock"))
    attempt("network", connect_anywhere)

    def write_stdout(pid):
        fd = os.open(f"/proc/{pid}/fd/1", os.O_WRONLY)
        try:
            if os.path.samestat(os.fstat(fd), os.stat("/dev/null")):
                raise OSError("only /dev/null, as anyone may")  # gVisor lets us reopen the zygote's
        finally:
            os.close(fd)

    def environ_beyond_the_containers(pid):
        """More than the container's own environment (hardening.py's, the image's, the host name
        every process here can read) in another process's start-up environment."""
        with open(f"/proc/{pid}/environ", "rb") as fh:
            pairs = dict(item.split(b"=", 1) for item in fh.read().split(b"\0") if b"=" in item)
        if pairs.get(b"HOSTNAME") == socket.gethostname().encode():
            del pairs[b"HOSTNAME"]
        if set(pairs) <= CONTAINER_ENVIRONMENT:
            raise OSError("only the container's own environment")

    for pid in others:
        attempt(f"environ of {pid}", lambda pid=pid: read(f"/proc/{pid}/environ"))
        attempt(f"secrets in the environ of {pid}", lambda pid=pid: environ_beyond_the_containers(pid))
        attempt(f"mem of {pid}", lambda pid=pid: read(f"/proc/{pid}/mem"))
        attempt(f"fds of {pid}", lambda pid=pid: os.listdir(f"/proc/{pid}/fd"))
        attempt(f"stdout of {pid}", lambda pid=pid: write_stdout(pid))
        attempt(f"signal {pid}", lambda pid=pid: os.kill(pid, signal.SIGSTOP))
        attempt(f"prlimit {pid}", lambda pid=pid: resource.prlimit(pid, resource.RLIMIT_AS, (1 << 20, 1 << 20)))
        attempt(f"renice {pid}", lambda pid=pid: os.setpriority(os.PRIO_PROCESS, pid, 19))
        attempt(f"oom_score_adj of {pid}", lambda pid=pid: open(f"/proc/{pid}/oom_score_adj", "w").write("1000"))  # noqa: SIM115

    def message_queue():
        librt = ctypes.CDLL("librt.so.1", use_errno=True)
        if librt.mq_open(b"/verifier-probe", os.O_CREAT | os.O_RDWR, 0o600, None) < 0:
            raise OSError(ctypes.get_errno(), "mq_open")

    def x32_syscall_past_the_guard():
        # technique: an x32 syscall number (nr | 0x40000000) that a filter matching x86_64 numbers misses
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.syscall(0x40000000 | 39) < 0 and ctypes.get_errno() == errno.EACCES:  # x32 getpid
            raise OSError("refused by the guard")

    if not os.path.isdir("/dev/mqueue"):  # gVisor: a reset could not see or remove the queue
        attempt("message queue without /dev/mqueue", message_queue)
        if os.uname().machine == "x86_64":  # the guard (gVisor only) refuses the whole x32 range
            attempt("x32 syscall not refused by the guard", x32_syscall_past_the_guard)
    attempt("setuid root", lambda: os.setuid(0))
    attempt("setuid zygote", lambda: os.setuid(zygote_uid))
    return found
