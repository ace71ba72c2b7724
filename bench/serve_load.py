"""`verifier serve` under load, against `verifier bench humaneval` in process, in one run.

The samples are the issue's HumanEval sets (bench/batch_speed.py): 328 (164 canonical solutions
and one seeded mutant of each, two of them loops that never end) for verdict identity, and 326
(the same without the loops, whose time limit would dominate any speed figure) for throughput.

1. in process: `verifier.bench.humaneval.evaluate` on the 328 (what `verifier bench humaneval`
   runs: its verdicts); and the two throughputs a wave is compared with, on the 326:
   - `verifier bench humaneval` as a user runs it: a process of its own, timed from its start to
     its exit (start-up and pool warm-up included, every sample verified anew), before the
     waves and after each size (`ratio_to_cli`: the issue's and bench/'s rule);
   - the same engine in this process on a warm `reuse` pool (`verify_batch`, timed once warm),
     before and after each wave (`ratio_to_in_process`): stricter, with no start-up at all, so
     it shows what the HTTP front costs a check at steady state;
2. a real server (`verifier serve`, a subprocess on 127.0.0.1, the same pool size and limits):
   the 328 as one /v1/batch, whose verdicts must be identical to 1's;
3. waves of 10, 50 and 200 concurrent clients (each a connection of its own, an asyncio task of
   a load-generating process at nice 10: on this 2-core machine the clients share the CPUs with
   the sandboxes, as a deployment's clients on other machines would not), each sending the 326
   one check at a time (POST /v1/check, no client-side retry) until the wave has sent
   `--rounds` x 326, `--pairs` waves of each size, each between two in-process runs of the 326
   (each figure is the median of the waves' ratios to the runs beside them): checks per second, p50/p99
   latency, statuses, CPU a check of the server and of the clients; every request must get a
   verdict or `overloaded` (none lost, none a `timeout` where the in-process run found none);
4. the server's memory (resident set, from /proc) before the waves and after `--soak` checks in
   all (10,000 by default).

    python bench/serve_load.py [--clients 10,50,200] [--pairs 3] [--rounds 1] [--soak 10000] [--workers 2]

Both sides queue for a folder of sandbox slots of this run's own (VERIFIER_SLOTS_DIR, `--workers`
slots), so that neither waits for slots other processes on a shared machine hold: they compete
for the CPU only, as they would on a machine of their own. The in-process throughput is measured
before and after each wave; a wave's ratio is to the mean of the two beside it (a busy host drifts).

Only against 127.0.0.1; bounded in count (every wave and the soak send a fixed number of checks)
and in time (each request has a deadline). Writes bench/results/serve-load-<timestamp>.json.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import platform
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench.batch_speed import with_loops  # noqa: E402
from bench.humaneval_speed import sample_set  # noqa: E402
from verifier.batch import verify_batch  # noqa: E402
from verifier.bench import harness  # noqa: E402
from verifier.bench import humaneval as he  # noqa: E402
from verifier.bench.passk import REFERENCE_TIMEOUT_S  # noqa: E402
from verifier.client import Client  # noqa: E402
from verifier.evidence import Status, is_verdict  # noqa: E402
from verifier.sandbox.docker_engine import connect  # noqa: E402
from verifier.sandbox.image import build  # noqa: E402

REQUEST_DEADLINE_S = 600.0


def VERDICT(status: str) -> bool:
    return is_verdict(Status(status))


def quantile(values: list[float], q: int) -> float:
    return round(statistics.quantiles(values, n=100, method="inclusive")[q - 1], 3) if len(values) > 1 else 0.0


def in_process_328(samples: list[dict[str, Any]], workers: int, tmp: Path) -> tuple[list[str], dict[str, Any]]:
    """What `verifier bench humaneval` finds for the 328: statuses and summary."""
    path = tmp / "samples-328.jsonl"
    lines = [json.dumps({"task_id": s["task_id"], "completion": s["completion"]}) + "\n" for s in samples]
    path.write_text("".join(lines))
    run = he.evaluate(he.load(path), he.Options(workers=workers, progress=False))
    return [ev.status.value for ev in run.evidence], run.summary


def in_process_warm(no_loops: list[dict[str, Any]], workers: int) -> dict[str, Any]:
    """The 326 on a warm reuse pool, in process, timed once the pool is warm."""
    problems = he.load_problems()
    jobs, _ = he.unique_jobs([he.Sample(s["task_id"], s["completion"], {}) for s in no_loops], problems)
    with harness.bench_verifier("reuse", workers=workers, limits=he.bench_limits(REFERENCE_TIMEOUT_S)) as verifier:
        verifier.backend.warm_up()  # type: ignore[attr-defined]
        started = time.monotonic()
        evidence = verify_batch(verifier, jobs, workers=workers, progress=False)
        wall = time.monotonic() - started
    return {"wall_s": round(wall, 2), "checks_per_s": round(len(jobs) / wall, 2), "passed": sum(e.ok for e in evidence)}


def cli_end_to_end(no_loops: list[dict[str, Any]], workers: int, tmp: Path) -> dict[str, Any]:
    """`verifier bench humaneval` on the 326 as a user runs it: a process of its own, from its
    start to its exit (start-up and its pool's warm-up included, every sample verified anew)."""
    path = tmp / "samples-326.jsonl"
    lines = [json.dumps({"task_id": s["task_id"], "completion": s["completion"]}) + "\n" for s in no_loops]
    path.write_text("".join(lines))
    command = [sys.executable, "-m", "verifier", "bench", "humaneval", str(path), "--no-cache"]
    command += ["--workers", str(workers)]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"verifier bench humaneval failed: {done.stderr[-3000:]}")
    return {"wall_s": round(wall, 2), "checks_per_s": round(len(no_loops) / wall, 2)}


def start_server(folder: Path, workers: int) -> tuple[subprocess.Popen[bytes], str, str]:
    token = "load-" + secrets.token_urlsafe(24)
    he.write_suites(folder / "humaneval", he.load_problems())
    (folder / "tokens.toml").write_text(
        f'[[tokens]]\nname = "load"\nsha256 = "{hashlib.sha256(token.encode()).hexdigest()}"\nsuites = ["*"]\n'
        "concurrency = 1000\nrate_per_s = 100000.0\nburst = 100000\ndaily_quota = 10000000\n"
    )
    (folder / "serve.toml").write_text(
        'tokens = "tokens.toml"\npolicy = "reuse"\nmax_in_flight = 512\nevidence_kept = 20000\n'
        f'[pool]\nsize = {workers}\nmax_uses = {harness.BENCH_MAX_USES}\npreload = ""\n[run_code]\nenabled = false\n'
        '[suite_roots]\nhumaneval = "humaneval"\n[http]\nmax_connections = 2000\n'
    )
    log = open(folder / "server.log", "wb")  # noqa: SIM115 - the server's for its life
    proc = subprocess.Popen(
        [sys.executable, "-m", "verifier", "serve", "--config", str(folder / "serve.toml"), "--port", "0"],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        found = re.search(r"listening on (http://127\.0\.0\.1:\d+)", (folder / "server.log").read_text())
        if found:
            try:
                if httpx.get(found.group(1) + "/healthz", timeout=5).json()["status"] == "ok":
                    return proc, found.group(1), token
            except (httpx.HTTPError, ValueError):
                pass
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("the server did not start:\n" + (folder / "server.log").read_text()[-3000:])


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of process `pid` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def items_of(samples: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    problems = he.load_problems()
    return [
        (str(i), problems[s["task_id"]].source(s["completion"]), f"humaneval/{s['task_id']}")
        for i, s in enumerate(samples)
    ]


#: The load generator's niceness: on this machine it shares the CPUs with the sandboxes, which a
#: real deployment's clients (on the trainers' machines) would not; it still gets every CPU
#: moment the sandboxes leave, and its own CPU a check is reported beside the figures.
CLIENT_NICE = 10


def wave(url: str, token: str, items: list[tuple[str, str, str]], clients: int, total: int) -> dict[str, Any]:
    """`clients` concurrent clients (one connection each: asyncio tasks of a process of their own,
    at CLIENT_NICE) sending checks (item i % len(items)) until `total` are answered."""
    with tempfile.NamedTemporaryFile("w", suffix=".json") as fh:
        json.dump({"url": url, "token": token, "items": items, "clients": clients, "total": total}, fh)
        fh.flush()
        done = subprocess.run(
            [sys.executable, __file__, "--wave", fh.name], capture_output=True, text=True, check=False
        )
    if done.returncode != 0:
        raise SystemExit(f"the load generator failed: {done.stderr[-3000:]}")
    return dict(json.loads(done.stdout))


def wave_process(spec_path: str) -> int:
    """The load generator's process (`--wave SPEC`): runs the wave, prints its result as JSON."""
    os.nice(CLIENT_NICE)
    spec = json.loads(Path(spec_path).read_text())
    items = [tuple(item) for item in spec["items"]]
    cpu = time.process_time()  # the wave's own, not the imports'
    result = asyncio.run(_wave(spec["url"], spec["token"], items, spec["clients"], spec["total"]))
    result["clients_cpu_ms_per_check"] = round((time.process_time() - cpu) / max(1, result["checks"]) * 1000, 2)
    print(json.dumps(result))
    return 0


class Connection:
    """One client's keep-alive HTTP/1.1 connection, as lean as a client can be: each request's
    bytes are made once per item, and an answer is read by its Content-Length. The load generator
    shares this machine's two cores with the sandboxes and the server, which a deployment's
    clients (on the trainers' machines) would not; httpx's client cost 7-15 ms of CPU a check here,
    this one well under 1 ms, so the figures are the server's, not the load generator's."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, request: bytes) -> tuple[int, bytes]:
        if self.writer is None or self.writer.is_closing():
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        self.writer.write(request)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        found = re.search(rb"(?i)\r\ncontent-length: *(\d+)", head)
        if found is None:
            raise ValueError("an answer without Content-Length")
        body = await self.reader.readexactly(int(found.group(1)))
        if re.search(rb"(?i)\r\nconnection: *close", head):
            await self.close()
        return status, body

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            try:
                await self.writer.wait_closed()
            except OSError:
                pass
            self.writer = None


def requests_of(url: str, token: str, items: list[tuple[str, str, str]]) -> list[bytes]:
    """Each item's POST /v1/check, as bytes on the wire."""
    host = url.split("//", 1)[1]
    made = []
    for _, candidate, suite in items:
        body = json.dumps({"candidate": candidate, "suite": suite}).encode()
        head = (
            f"POST /v1/check HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        made.append(head.encode() + body)
    return made


#: What a check's answer says: its evidence's status, or a refusal's error (read without decoding
#: the whole evidence: the load generator's CPU is not what is measured).
STATUS = re.compile(rb'"(?:status|error)":"([a-z_]+)"')


async def _wave(url: str, token: str, items: list[tuple[str, str, str]], clients: int, total: int) -> dict[str, Any]:
    cursor = iter(range(total))
    rows: list[tuple[int, int, str, float]] = []
    requests = requests_of(url, token, items)
    host, port = url.split("//", 1)[1].rsplit(":", 1)

    async def client() -> None:
        connection = Connection(host, int(port))
        try:
            for n in cursor:
                started = time.monotonic()
                try:
                    code, body = await asyncio.wait_for(connection.post(requests[n % len(items)]), REQUEST_DEADLINE_S)
                    found = STATUS.search(body)
                    status = found.group(1).decode() if found else "?"
                except (TimeoutError, OSError, ValueError, asyncio.IncompleteReadError) as exc:
                    code, status = 0, f"lost: {exc.__class__.__name__}"
                    await connection.close()
                rows.append((n, code, status, time.monotonic() - started))
        finally:
            await connection.close()

    started = time.monotonic()
    await asyncio.gather(*(client() for _ in range(clients)))
    wall = time.monotonic() - started
    latencies = [r[3] for r in rows]
    statuses: dict[str, int] = {}
    for _, _, status, _ in rows:
        statuses[status] = statuses.get(status, 0) + 1
    return {
        "clients": clients,
        "checks": len(rows),
        "wall_s": round(wall, 2),
        "checks_per_s": round(len(rows) / wall, 2),
        "p50_s": quantile(latencies, 50),
        "p99_s": quantile(latencies, 99),
        "statuses": statuses,
        "lost": sum(1 for r in rows if r[1] == 0),
        "http": sorted({r[1] for r in rows}),
        "rows": [[r[0] % len(items), r[2]] for r in rows],
    }


def measured_wave(
    pid: int, url: str, token: str, items: list[tuple[str, str, str]], clients: int, total: int, expected: list[str]
) -> dict[str, Any]:
    """One wave, with the server's CPU a check and the timeouts no in-process run found."""
    server_cpu = cpu_s(pid)
    result = wave(url, token, items, clients, total)
    result["server_cpu_ms_per_check"] = round((cpu_s(pid) - server_cpu) / result["checks"] * 1000, 2)
    rows = result.pop("rows")
    result["false_timeouts"] = sum(1 for i, status in rows if status == "timeout" and expected[i] != "timeout")
    return result


def served_part(
    samples: list[dict[str, Any]],
    no_loops: list[dict[str, Any]],
    args: argparse.Namespace,
    tmp: Path,
    expected: list[str],
) -> dict[str, Any]:
    """The server's part; before each wave and after the last, the in-process throughput again
    (interleaved: a busy host drifts, so each wave is compared with the runs beside it)."""
    proc, url, token = start_server(tmp / "server", args.workers)
    out: dict[str, Any] = {"server_pid": proc.pid}
    try:
        with Client(url, token) as client:
            started = time.monotonic()
            lines = {int(line.id): line.evidence.status.value for line in client.batch(items_of(samples))}
            out["batch_328"] = {"wall_s": round(time.monotonic() - started, 2)}
        got = [lines[i] for i in range(len(samples))]
        # `overloaded` is no verdict (the host's fault, on a busy machine a loop's too): verdicts
        # are compared where both sides have one, and the samples without one are listed.
        both = [i for i, (a, b) in enumerate(zip(got, expected, strict=True)) if VERDICT(a) and VERDICT(b)]
        out["batch_328"]["verdicts_compared"] = len(both)
        out["batch_328"]["identical_verdicts"] = all(got[i] == expected[i] for i in both)
        out["batch_328"]["differing"] = [i for i in both if got[i] != expected[i]]
        out["batch_328"]["no_verdict"] = {
            "served": [(i, got[i]) for i in range(len(got)) if not VERDICT(got[i])],
            "in_process": [(i, expected[i]) for i in range(len(got)) if not VERDICT(expected[i])],
        }
        out["rss_mib_before_waves"] = rss_mib(proc.pid)
        items = items_of(no_loops)
        expected_326 = [status for status, s in zip(expected, samples, strict=True) if s["kind"] != "loop"]
        out["waves"] = []
        out["in_process_runs"] = [in_process_warm(no_loops, args.workers)]
        out["cli_runs"] = [cli_end_to_end(no_loops, args.workers, tmp)]
        sent = len(samples)
        for clients in (int(c) for c in args.clients.split(",")):
            for _ in range(args.pairs):
                result = measured_wave(proc.pid, url, token, items, clients, args.rounds * len(items), expected_326)
                out["in_process_runs"].append(in_process_warm(no_loops, args.workers))
                beside = [run["checks_per_s"] for run in out["in_process_runs"][-2:]]
                result["in_process_beside"] = beside
                result["ratio_to_in_process"] = round(result["checks_per_s"] / statistics.mean(beside), 3)
                out["waves"].append(result)
                sent += result["checks"]
                print(
                    f"{clients:>4} clients: {result['checks_per_s']} checks/s (in process beside it: {beside}), "
                    f"p50 {result['p50_s']} s, p99 {result['p99_s']} s, {result['statuses']}",
                    file=sys.stderr,
                )
            ratios = [w["ratio_to_in_process"] for w in out["waves"] if w["clients"] == clients]
            out.setdefault("median_ratio", {})[str(clients)] = round(statistics.median(ratios), 3)
            out["cli_runs"].append(cli_end_to_end(no_loops, args.workers, tmp))
            cli = statistics.mean(run["checks_per_s"] for run in out["cli_runs"][-2:])
            for w in out["waves"][-args.pairs :]:
                w["ratio_to_cli"] = round(w["checks_per_s"] / cli, 3)
            out.setdefault("median_ratio_to_cli", {})[str(clients)] = round(
                statistics.median(w["ratio_to_cli"] for w in out["waves"][-args.pairs :]), 3
            )
            print(f"{clients:>4} clients: verifier bench humaneval end to end: {cli:.1f} checks/s", file=sys.stderr)
        if args.soak > sent:
            soak = wave(url, token, items, 50, args.soak - sent)
            soak.pop("rows")
            out["soak"] = soak
            sent += soak["checks"]
        out["checks_sent"] = sent
        out["rss_mib_after"] = rss_mib(proc.pid)
    finally:
        proc.terminate()
        proc.wait(300)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", default="10,50,200")
    parser.add_argument("--rounds", type=int, default=1, help="Each wave sends ROUNDS x 326 checks.")
    parser.add_argument("--pairs", type=int, default=3, help="Waves of each size, each after an in-process run.")
    parser.add_argument("--soak", type=int, default=10_000, help="Checks sent in all before memory is read.")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--limit", type=int, default=None, help="Only the first N samples (a trial run).")
    parser.add_argument("--wave", help=argparse.SUPPRESS)  # the load generator's own process
    args = parser.parse_args()
    if args.wave:
        return wave_process(args.wave)
    build(connect())
    samples = with_loops(sample_set(he.load_problems()))[: args.limit]
    no_loops = [s for s in samples if s["kind"] != "loop"]
    out: dict[str, Any] = {
        "bench": "serve-load",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "machine": {"cores": os.cpu_count(), "python": platform.python_version(), "load_before": os.getloadavg()},
        "workers": args.workers,
    }
    with tempfile.TemporaryDirectory(prefix="serve-load-") as tmp:
        os.environ["VERIFIER_SLOTS_DIR"] = str(Path(tmp) / "slots")
        os.environ["VERIFIER_MAX_SANDBOXES"] = str(args.workers)
        statuses, summary = in_process_328(samples, args.workers, Path(tmp))
        out["in_process_328"] = summary
        out["served"] = served_part(samples, no_loops, args, Path(tmp), statuses)
    out["machine"]["load_after"] = os.getloadavg()
    results = HERE / "results"
    results.mkdir(exist_ok=True)
    path = results / f"serve-load-{time.strftime('%Y%m%dT%H%M%S')}.json"
    path.write_text(json.dumps(out, indent=2) + "\n")
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
