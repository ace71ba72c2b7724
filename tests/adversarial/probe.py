"""An honest candidate that tries to break out and reports what worked (run by test_containment)."""

import os
import signal
import socket


def _status():
    out = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            out[key] = value.strip()
    return out


def whoami():
    status = _status()
    return {
        "uid": os.getuid(),
        "cap_eff": int(status["CapEff"], 16),
        "no_new_privs": int(status["NoNewPrivs"]),
    }


def _trusted_pids():
    pids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid != os.getuid():
                    pids.append(int(entry))
            except OSError:
                pass
    return pids


def leaks():
    found = []

    def attempt(name, fn):
        try:
            fn()
        except Exception:
            return
        found.append(name)

    def read(path):
        with open(path, "rb") as fh:
            fh.read(1)

    attempt("list trusted dir", lambda: os.listdir("/run/trusted"))
    attempt("read suite", lambda: read("/run/trusted/suite/test_probe.py"))
    attempt("read job", lambda: read("/run/trusted/job.json"))
    attempt("write trusted dir", lambda: open("/run/trusted/x", "w").close())
    attempt("write root fs", lambda: open("/usr/x", "w").close())
    attempt("read shadow", lambda: read("/etc/shadow"))
    attempt("docker socket", lambda: socket.socket(socket.AF_UNIX).connect("/var/run/docker.sock"))
    attempt("network", lambda: socket.create_connection(("10.255.255.1", 9), timeout=1))
    for pid in _trusted_pids():
        attempt(f"environ of {pid}", lambda pid=pid: read(f"/proc/{pid}/environ"))
        attempt(f"mem of {pid}", lambda pid=pid: read(f"/proc/{pid}/mem"))
        attempt(f"fds of {pid}", lambda pid=pid: os.listdir(f"/proc/{pid}/fd"))
        attempt(f"stdout of {pid}", lambda pid=pid: open(f"/proc/{pid}/fd/1", "w").close())
        attempt(f"signal {pid}", lambda pid=pid: os.kill(pid, signal.SIGSTOP))
    attempt("setuid root", lambda: os.setuid(0))
    return found
