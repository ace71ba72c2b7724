"""Where a program case's time goes, inside one sandbox: spawn, run, reap, reset, drain.

Runs a script in a launcher-mode container (the same locked-down container a job gets) that
starts the zygote the way `launch` does, becomes the trusted uid, and times each zygote
request of N program cases of `a + b` (p50 in milliseconds). Not part of the test suite.

    python bench/io_phases.py [--cases 200]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from verifier.limits import Limits  # noqa: E402
from verifier.sandbox.backend import SandboxJob  # noqa: E402
from verifier.sandbox.docker_engine import DockerBackend, connect  # noqa: E402
from verifier.sandbox.image import build, image_tag  # noqa: E402

SCRIPT = r"""
import json, os, select, socket, statistics, time
from verifier_runner.protocol import BASE_ENV, TRUSTED_UID, ZYGOTE_UID
from verifier_runner.privileges import become

ctl_t, ctl_z = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
if os.fork() == 0:  # the zygote, as launch starts it
    ctl_t.close()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    become(ZYGOTE_UID, keep_setuid=True)
    os.environ.clear()
    os.environ.update({**BASE_ENV, "HOME": "/"})
    os.chdir("/")
    from verifier_runner import zygote
    zygote.serve(ctl_z)
    os._exit(0)
ctl_z.close()
become(TRUSTED_UID)
from verifier_runner.proxy import control

source = os.memfd_create("c")
os.write(source, b"a, b = map(int, input().split())\nprint(a + b)\n")
os.lseek(source, 0, 0)
control(ctl_t, {"op": "load", "module": "solution"}, [source])
os.close(source)
control(ctl_t, {"op": "reset"})
phases = {k: [] for k in ("spawn", "run", "reap", "reset", "drain", "total")}
for _ in range(CASES):
    t0 = time.perf_counter()
    r0, w0 = os.pipe(); r1, w1 = os.pipe(); r2, w2 = os.pipe()
    pid = control(ctl_t, {"op": "spawn_program", "cpu_s": 10}, [r0, w1, w2])["pid"]
    for fd in (r0, w1, w2):
        os.close(fd)
    pidfd = os.pidfd_open(pid)
    t1 = time.perf_counter()
    os.write(w0, b"1 2\n"); os.close(w0)
    out = b""
    while pidfd not in (ready := select.select([r1, r2, pidfd], [], [], 5)[0]):
        for fd in ready:
            out += os.read(fd, 65536)
    t2 = time.perf_counter()
    control(ctl_t, {"op": "reap", "pid": pid})
    t3 = time.perf_counter()
    ok = control(ctl_t, {"op": "reset"})["ok"]
    t4 = time.perf_counter()
    while chunk := os.read(r1, 65536):
        out += chunk
    for fd in (r1, r2, pidfd):
        os.close(fd)
    t5 = time.perf_counter()
    assert out == b"3\n" and ok, out
    for key, value in zip(phases, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4, t5 - t0)):
        phases[key].append(value)
print(json.dumps({k: round(statistics.median(v) * 1000, 3) for k, v in phases.items()}))
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=200)
    args = parser.parse_args()
    build(connect())
    job = SandboxJob(
        image=image_tag(),
        command=["python3", "-I", "-B", "-c", SCRIPT.replace("CASES", str(args.cases))],
        limits=Limits(timeout_s=300),
        mode="launcher",
    )
    with DockerBackend() as backend:
        raw = backend.run(job)
    print(raw.stdout.decode().strip() or raw.stderr.decode()[-2000:])
    return 0 if raw.exit_code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
