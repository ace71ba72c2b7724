"""Speed of `verifier review` against plain pytest on the host, for the same trees, in one run.

Two repositories: the example library (examples/review, its `fix-adjacent-ranges` change, and its
`comma-space` change, which edits tests: the review then also runs the base's versions of the
edited tests on both sides, four sandbox sessions against the host's two) and a
generated suite of 600 tests (the head's change to `clamp` fixes 6 tests and breaks 24, so both
sides rerun failing tests). For each, after one warm-up
review (the sandbox image is built and the environment image cached):

- review:   `review()` of base+head (both trees' test sessions in two sandboxes, reruns of
            failing tests included), wall time, and the same through the CLI;
- host:     the same two trees (base code + head tests, and head) extracted to disk and run by
            plain `python -m pytest` in a clean virtualenv holding the sandbox's pinned pytest and
            Hypothesis (warmed once: byte-code caches written), one after the other (what the review
            replaces) and side by side;
- ratio:    review / host (sequential). Target: <= 2.5.

It also records each review's cost split (environment, base run, head run) and checks that the
reviews after the warm-up built no environment image (by image id and by the `built` flag).

    python bench/review_speed.py [--runs 5]

Writes bench/results/review-speed-<timestamp>.json. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples" / "review"))

import make_repo as example  # type: ignore[import-not-found]  # noqa: E402

from verifier.review import ReviewRequest, review  # noqa: E402
from verifier.review.gitread import write_files  # noqa: E402
from verifier.review.service import plan_trees, read_trees  # noqa: E402
from verifier.sandbox.docker_engine import connect  # noqa: E402
from verifier.sandbox.environment import sandbox_pins  # noqa: E402
from verifier.sandbox.image import build  # noqa: E402

GENERATED_TESTS = 600
GIT_ENV = {
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@example.invalid",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@example.invalid",
}


def git(repo: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | GIT_ENV
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def generated_repo(dest: Path) -> Path:
    """600 tests in 12 modules (plain, parametrized, fixtures, a class); the head fixes 6, breaks 24."""
    (dest / "src" / "gen").mkdir(parents=True)
    (dest / "tests").mkdir()
    (dest / "pyproject.toml").write_text('[project]\nname = "gen"\nversion = "1"\n')
    code = "def scale(x, k):\n    return x * k\n\n\ndef clamp(x, lo, hi):\n    return max(lo, min(x, hi - 1))\n"
    (dest / "src" / "gen" / "__init__.py").write_text(code)
    (dest / "tests" / "conftest.py").write_text(
        "import pytest\n\n\n@pytest.fixture\ndef limits():\n    return (0, 10)\n"
    )
    per_module = GENERATED_TESTS // 12
    for m in range(12):
        lines = ["import pytest", "", "from gen import clamp, scale", ""]
        n = 0
        lines += [
            f"@pytest.mark.parametrize('x', range({per_module // 2}))",
            "def test_scale(x):",
            "    assert scale(x, 3) == 3 * x",
            "",
        ]
        n += per_module // 2
        for i in range(per_module // 4):
            lines += [f"def test_plain_{i}(limits):", f"    assert clamp({i}, *limits) == min({i}, 9)", ""]
            n += 1
        lines += ["class TestGroup:"]
        while n < per_module - (1 if m < 6 else 0):
            lines += [f"    def test_m_{n}(self):", f"        assert scale({n}, 0) == 0", ""]
            n += 1
        if m < 6:  # fails on the base (clamp is off by one at the top), fixed by the head
            lines += ["", "def test_clamp_top(limits):", "    assert clamp(10, *limits) == 10", ""]
        (dest / "tests" / f"test_gen_{m:02d}.py").write_text("\n".join(lines) + "\n")
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "base")
    git(dest, "checkout", "-q", "-b", "change")
    (dest / "src" / "gen" / "__init__.py").write_text(code.replace("min(x, hi - 1)", "min(x, hi)"))
    git(dest, "commit", "-q", "-am", "clamp: include the upper limit")
    git(dest, "checkout", "-q", "main")
    return dest


def host_venv(root: Path) -> Path:
    """A clean virtualenv with the sandbox's own pinned pytest and Hypothesis (nothing else)."""
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run(
        [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *sandbox_pins()], check=True
    )
    return py


def host_trees(repo: Path, head: str, root: Path) -> list[Path]:
    """The two trees the review runs (base code + head tests, and the head), written to disk."""
    trees = read_trees(ReviewRequest(repo=repo, base="main", head=head))
    _, base_files, head_files = plan_trees(trees, "head")
    out = []
    for name, files in (("base", base_files), ("head", head_files)):
        target = root / name
        write_files(files, target)
        out.append(target)
    return out


def host_session(py: Path, tree: Path) -> float:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tree),
        "PYTHONPATH": os.pathsep.join([str(tree / "src"), str(tree)]),
        "PYTHONHASHSEED": "0",  # byte-code and pytest's rewrite caches stay on: a developer's warm host
    }
    t = time.monotonic()
    subprocess.run([str(py), "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=tree, env=env, capture_output=True)
    return time.monotonic() - t


def median(xs: list[float]) -> float:
    return round(statistics.median(xs), 3)


def measure(name: str, repo: Path, head: str, py: Path, runs: int, work: Path) -> dict[str, Any]:
    request = ReviewRequest(repo=repo, base="main", head=head)
    warm = review(request)  # builds (or finds) the environment; later reviews must build nothing
    env_ids = {r.environment.image_id for r in warm.runs}
    trees = host_trees(repo, head, work / name)
    for tree in trees:
        host_session(py, tree)  # warm, like the review's image: caches written, imports in the page cache
    rows: dict[str, list[float]] = {k: [] for k in ("review", "cli", "host_seq", "host_par", "env", "base", "head")}
    built_after_warmup = []
    same_env_ids = []
    for _ in range(runs):
        t = time.monotonic()
        ev = review(request)
        rows["review"].append(time.monotonic() - t)
        rows["env"].append(ev.timings.environment_s)
        rows["base"].append(ev.timings.base_s)
        rows["head"].append(ev.timings.head_s)
        built_after_warmup.append(any(r.environment.built for r in ev.runs))
        same_env_ids.append({r.environment.image_id for r in ev.runs} == env_ids)
        t = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "verifier", "review", str(repo), "--base", "main", "--head", head, "-f", "json"],
            capture_output=True,
        )
        rows["cli"].append(time.monotonic() - t)
        rows["host_seq"].append(sum(host_session(py, tree) for tree in trees))
        t = time.monotonic()
        with ThreadPoolExecutor(2) as pool:
            list(pool.map(lambda tree: host_session(py, tree), trees))
        rows["host_par"].append(time.monotonic() - t)
    result = {k: median(v) for k, v in rows.items()}
    return {
        "repository": name,
        "change": head,
        "tests": warm.counts.total,
        "classes": {k: v for k, v in warm.counts.model_dump().items() if v and k not in ("total", "blocking")},
        "ok": warm.ok,
        "sandbox_sessions": [r.side for r in warm.runs],
        "median_s": result,
        "ratio_review_to_host_sequential": round(result["review"] / result["host_seq"], 2),
        "ratio_cli_to_host_sequential": round(result["cli"] / result["host_seq"], 2),
        "ratio_review_to_host_parallel": round(result["review"] / result["host_par"], 2),
        "cost_split_median_s": {"environment": result["env"], "base_run": result["base"], "head_run": result["head"]},
        "warmup_built_environment": any(r.environment.built for r in warm.runs),
        "reviews_after_warmup_built_nothing": not any(built_after_warmup),
        "reviews_after_warmup_used_the_same_environment_image": all(same_env_ids),
        "samples_s": {k: [round(x, 3) for x in v] for k, v in rows.items()},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    build(connect())
    with tempfile.TemporaryDirectory(prefix="verifier-review-bench-") as tmp:
        work = Path(tmp)
        py = host_venv(work)
        example_repo = work / "rangeset"
        example.make(example_repo)
        generated = generated_repo(work / "gen")
        suites = [
            measure("example (rangeset)", example_repo, "fix-adjacent-ranges", py, args.runs, work),
            # Edits its tests: the review also runs the base's versions of them on both sides (4 sessions).
            measure("example (rangeset), tests edited", example_repo, "comma-space", py, args.runs, work),
            measure(f"generated ({GENERATED_TESTS} tests)", generated, "change", py, args.runs, work),
        ]
    report = {
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "load_avg_at_end": os.getloadavg()},
        "runs": args.runs,
        "target_ratio": 2.5,
        "suites": suites,
    }
    out = HERE / "results" / f"review-speed-{time.strftime('%Y%m%dT%H%M%S')}.json"
    out.write_text(json.dumps(report, indent=2) + "\n")
    for s in suites:
        m = s["median_s"]
        print(
            f"{s['repository']}: review {m['review']:.2f} s (cli {m['cli']:.2f} s), host pytest {m['host_seq']:.2f} s "
            f"sequential / {m['host_par']:.2f} s parallel -> ratio {s['ratio_review_to_host_sequential']} "
            f"(cli {s['ratio_cli_to_host_sequential']}); split env {m['env']:.2f} / base {m['base']:.2f} / "
            f"head {m['head']:.2f} s; rebuilt nothing: {s['reviews_after_warmup_built_nothing']}"
        )
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
