"""Build SWE-bench-shaped instances and predictions from the example repository.

    python examples/review/make_instances.py /tmp/swe   # the repository and the two JSONL files
    verifier review batch --instances /tmp/swe/instances.jsonl --predictions /tmp/swe/predictions.jsonl \
        --out-dir /tmp/swe/out

The instances' test_patch adds the test of the fix-adjacent-ranges branch
(`tests/test_sets.py::test_normalize_merges_adjacent_ranges`, FAIL_TO_PASS); four predictions:

    <name>-fix       the branch's own fix                               -> resolved
    <name>-wrong     the simpler-contains change (fixes nothing, breaks) -> not resolved
    <name>-garbled   the fix with a context line that is not there       -> error (does not apply)
    <name>-p2p       the fix plus the broken contains()                  -> not resolved (PASS_TO_PASS fails)

Standard library only (and make_repo.py beside it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_repo

FAIL_TO_PASS = ["tests/test_sets.py::test_normalize_merges_adjacent_ranges"]
PASS_TO_PASS = [
    "tests/test_sets.py::test_normalize_sorts_and_merges_overlaps",
    "tests/test_sets.py::test_contains_both_ends",
    "tests/test_parse.py::test_parse_single_numbers_and_ranges",
]
#: Each case's expected status in the summary.
EXPECTED = {"fix": "resolved", "wrong": "not_resolved", "garbled": "error", "p2p": "not_resolved"}


def _git(repo: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, env=env, capture_output=True, text=True).stdout


def records(repo: Path, name: str, model: str = "example-model") -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(instances, predictions) of the four cases on the example repository at `repo`."""
    base = _git(repo, "rev-parse", "main").strip()
    test_patch = _git(repo, "diff", "main", "fix-adjacent-ranges", "--", "tests")
    fix = _git(repo, "diff", "main", "fix-adjacent-ranges", "--", "src")
    wrong = _git(repo, "diff", "main", "simpler-contains", "--", "src")
    patches = {
        "fix": fix,
        "wrong": wrong,
        "garbled": fix.replace(" def normalize(ranges", " def normalise(ranges"),
        "p2p": fix + wrong,  # git apply takes several patches to one file, in order
    }
    instances, predictions = [], []
    for case, patch in patches.items():
        iid = f"{name}-{case}"
        instances.append({
            "instance_id": iid, "repo": str(repo), "base_commit": base, "patch": fix, "test_patch": test_patch,
            # as SWE-bench ships them: JSON-encoded strings
            "FAIL_TO_PASS": json.dumps(FAIL_TO_PASS), "PASS_TO_PASS": json.dumps(PASS_TO_PASS),
        })  # fmt: skip
        predictions.append({"instance_id": iid, "model_patch": patch, "model_name_or_path": model})
    return instances, predictions


def write_jsonl(path: Path, rows: list[dict[str, str]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def make(dest: Path, copies: int = 1) -> tuple[Path, Path]:
    """`copies` example repositories under `dest` and the two JSONL files; returns their paths."""
    dest.mkdir(parents=True, exist_ok=True)
    instances, predictions = [], []
    for i in range(copies):
        name = "rangeset" if copies == 1 else f"rangeset{i + 1}"
        make_repo.make(dest / name)
        inst, pred = records(dest / name, name)
        instances += inst
        predictions += pred
    write_jsonl(dest / "instances.jsonl", instances)
    write_jsonl(dest / "predictions.jsonl", predictions)
    return dest / "instances.jsonl", dest / "predictions.jsonl"


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    for path in make(Path(sys.argv[1])):
        print(path)


if __name__ == "__main__":
    main()
