"""The differential corpus: each case's candidate run against its suite twice, once with plain
pytest (suite and candidate in one process, as a developer would run them) and once in the
sandbox, and the two verdicts compared.

A case is a folder `cases/<name>/`:

- `candidate.py` (a single module, imported under the suite's `module`) or `candidate/` (a
  candidate folder: its files are the tree the suite's `modules` come from);
- `suite/`: an ordinary verifier suite (`suite.toml`, `test_*.py`, helpers; or a program suite);
- `expect.toml`: `category`, `honest` ("correct" or "wrong": what the author meant), `failing`
  (the test ids plain pytest fails, `[]` for a correct candidate: the corpus checks itself), and
  optionally `[difference]` with `reason` and `verifier_failing`: an intended difference, listed
  in docs/suites.md, where the verifier's failing ids are those instead of plain pytest's.

Test ids are pytest's node ids relative to the suite folder (`test_x.py::test_y[1]`) and
`case NAME` for program cases, as in the evidence. The plain run reads pytest's own junitxml
report; a node id is compared through junitxml's (classname, name) mangling.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from verifier.limits import PoolConfig
from verifier.runner.cases import compare, load_cases, run_checker
from verifier.suite import load_suite

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
CATEGORIES = (
    "functions",
    "generators",
    "iterators",
    "callables",
    "classes",
    "dunders",
    "numeric",
    "exceptions",
    "warnings",
    "context_managers",
    "dataclasses",
    "hypothesis_objects",
    "programs",
    "folders",
)
#: A plain run of one case (a suite of a few tests) that takes longer than this is a broken case.
PLAIN_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Case:
    name: str
    path: Path
    category: str
    honest: str
    failing: frozenset[str]
    difference: str | None = None
    verifier_failing: frozenset[str] | None = None

    @property
    def candidate(self) -> Path:
        folder = self.path / "candidate"
        return folder if folder.is_dir() else self.path / "candidate.py"

    @property
    def suite(self) -> Path:
        return self.path / "suite"

    @property
    def expected_verifier_failing(self) -> frozenset[str]:
        return self.failing if self.verifier_failing is None else self.verifier_failing


def load_case(path: Path) -> Case:
    raw = tomllib.loads((path / "expect.toml").read_text())
    unknown = set(raw) - {"category", "honest", "failing", "difference"}
    assert not unknown, f"{path.name}/expect.toml: unknown keys {sorted(unknown)}"
    assert raw["category"] in CATEGORIES, f"{path.name}: category {raw['category']!r} not in {CATEGORIES}"
    assert raw["honest"] in ("correct", "wrong"), f"{path.name}: honest must be 'correct' or 'wrong'"
    failing = frozenset(raw.get("failing", []))
    assert (raw["honest"] == "correct") == (not failing), f"{path.name}: a wrong candidate names what it fails"
    diff = raw.get("difference")
    if diff is not None:
        assert set(diff) == {"reason", "verifier_failing"}, f"{path.name}: [difference] has reason, verifier_failing"
    return Case(
        name=path.name,
        path=path,
        category=raw["category"],
        honest=raw["honest"],
        failing=failing,
        difference=None if diff is None else str(diff["reason"]),
        verifier_failing=None if diff is None else frozenset(diff["verifier_failing"]),
    )


def load_cases_dir(root: Path = CASES) -> list[Case]:
    return [load_case(p) for p in sorted(root.iterdir()) if (p / "expect.toml").is_file()]


@dataclass
class Outcome:
    """One side's verdict on a case."""

    ok: bool
    failing: frozenset[str]
    #: Per failing id: why (the verifier's trusted summary, or pytest's message), for reports.
    why: dict[str, str] = field(default_factory=dict)
    #: Whole-run trouble (a plain run that could not report, the evidence's status and reason).
    note: str = ""


# -- plain pytest ---------------------------------------------------------------------------


def junit_key(test_id: str) -> tuple[str, str]:
    """A pytest node id as junitxml names it: (classname, name), as `_pytest.junitxml` mangles it."""
    path, bracket, params = test_id.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def _read_junit(report: Path) -> tuple[int, dict[tuple[str, str], str]]:
    """(tests reported, {(classname, name): why} of every test that did not pass)."""
    root = ET.parse(report).getroot()
    tests, bad = 0, {}
    for case in root.iter("testcase"):
        tests += 1
        for tag in ("failure", "error", "skipped"):
            node = case.find(tag)
            if node is not None:
                why = f"{tag}: {node.get('message', '')}".strip()
                bad[(case.get("classname", ""), case.get("name", ""))] = why.splitlines()[0][:300] if why else tag
                break
    return tests, bad


def _candidate_tree(case: Case, module: str, into: Path) -> None:
    if case.candidate.is_dir():
        shutil.copytree(case.candidate, into, dirs_exist_ok=True)
    else:
        into.mkdir(parents=True, exist_ok=True)
        shutil.copy(case.candidate, into / f"{module}.py")


def run_plain(case: Case) -> Outcome:
    """The case with plain pytest: suite and candidate in one process (a subprocess of ours)."""
    suite = load_suite(case.suite)
    with tempfile.TemporaryDirectory(prefix=f"differential-{case.name}-") as tmp:
        root = Path(tmp)
        _candidate_tree(case, suite.module, root / "candidate")
        if suite.kind == "program":
            return _run_plain_program(case, root / "candidate" / f"{suite.module}.py")
        shutil.copytree(case.suite, root / "suite")
        (root / "pytest.ini").write_text("[pytest]\npython_files = test_*.py *_test.py\n")
        report = root / "report.xml"
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(root / "candidate"), str(HERE)]),
            "PYTHONDONTWRITEBYTECODE": "1",
            "PYTHONHASHSEED": "0",
            "TZ": "UTC",
            "DIFFERENTIAL_MAX_EXAMPLES": str(suite.max_examples),
            # The sandbox's pytest has no plugin but Hypothesis'; the host's may have many
            # (seconds of start-up each run).
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        }
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            str(root / "suite"),
            "-c",
            str(root / "pytest.ini"),
            "--rootdir",
            str(root / "suite"),
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "_hypothesis_pytestplugin",
            "-p",
            "plain_plugin",
            "-W",
            "ignore::pytest.PytestUnraisableExceptionWarning",
            f"--junitxml={report}",
            "-o",
            "junit_family=xunit2",
        ]
        proc = subprocess.run(
            cmd, cwd=root / "suite", env=env, capture_output=True, text=True, timeout=PLAIN_TIMEOUT_S, check=False
        )
        if not report.is_file():
            return Outcome(
                False, frozenset({"<run>"}), note=f"no report (exit {proc.returncode}): {proc.stdout[-2000:]}"
            )
        tests, bad = _read_junit(report)
        failing = frozenset(f"{classname}::{name}" for classname, name in bad)
        why = {f"{classname}::{name}": text for (classname, name), text in bad.items()}
        ok = proc.returncode == 0 and tests > 0 and not bad
        note = "" if ok or bad else f"exit {proc.returncode}: {proc.stdout[-2000:]}"
        return Outcome(ok, failing, why, note)


def _run_plain_program(case: Case, program: Path) -> Outcome:
    """A program suite judged plainly: `python program < NAME.in` per case, compared as the suite says."""
    suite = load_suite(case.suite)
    config = suite.program
    assert config is not None
    cases = load_cases(suite.files, config.cases)
    checker = None
    if config.compare == "checker":
        namespace: dict[str, object] = {}
        exec(compile(suite.files[str(config.checker)], str(config.checker), "exec"), namespace)
        checker = namespace["check"]
    failing, why = set(), {}
    for one in cases:
        test_id = f"case {one.name}"
        try:
            proc = subprocess.run(
                [sys.executable, str(program)],
                input=one.input,
                capture_output=True,
                timeout=max(10.0, 10 * config.time_limit_s),
                cwd=program.parent,
                check=False,
            )
        except subprocess.TimeoutExpired:
            failing.add(test_id)
            why[test_id] = "timeout"
            continue
        if proc.returncode != 0:
            failing.add(test_id)
            why[test_id] = f"exit code {proc.returncode}"
            continue
        if checker is not None:
            judged = run_checker(checker, one, proc.stdout)  # type: ignore[arg-type]
        else:
            judged = compare(config.compare, one.output, proc.stdout, abs_tol=config.abs_tol, rel_tol=config.rel_tol)
        if not judged.ok:
            failing.add(test_id)
            why[test_id] = judged.summary
    return Outcome(not failing, frozenset(failing), why)


# -- the sandbox ----------------------------------------------------------------------------


def keyed(ids: frozenset[str]) -> frozenset[str]:
    """Node ids in the form the plain run's junitxml gives them (`classname::name`); program
    case ids and the run's own pseudo-ids (`<run>`, `<candidate>`) stay as they are."""
    out = set()
    for test_id in ids:
        if test_id.startswith(("case ", "<")) or "::" not in test_id:
            out.add(test_id)
        else:
            classname, name = junit_key(test_id)
            out.add(f"{classname}::{name}")
    return frozenset(out)


def run_verifier_all(cases: list[Case], *, image: str | None = None, workers: int = 2) -> dict[str, Outcome]:
    """Every case through the sandbox: one run each, on a reused warm pool of `workers` containers."""
    from verifier import Limits, Verifier
    from verifier.batch import verify_batch

    limits = Limits(timeout_s=60)
    items = [(c.candidate, c.suite) for c in cases]
    with Verifier.pooled(PoolConfig(policy="reuse", size=workers, max_uses=10_000), limits=limits, image=image) as v:
        evidence = verify_batch(v, items, workers=workers, progress=False)
    out = {}
    for case, ev in zip(cases, evidence, strict=True):
        why = {f.test_id: f"{f.kind}: {f.message}" for f in ev.failures}
        failing = frozenset(f.test_id for f in ev.failures)
        out[case.name] = Outcome(ev.ok, failing, why, f"{ev.status.value}: {ev.reason}")
    return out


def run_plain_all(cases: list[Case], *, workers: int = 2) -> dict[str, Outcome]:
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(zip((c.name for c in cases), pool.map(run_plain, cases), strict=True))


def disagreement(case: Case, plain: Outcome, sandbox: Outcome) -> str | None:
    """None when the sandbox's verdict is what plain pytest's (or the documented difference)
    predicts; otherwise a description of both sides."""
    want = keyed(case.expected_verifier_failing) if case.difference else plain.failing
    got = keyed(sandbox.failing)
    if sandbox.ok == (not want) and got == want:
        return None
    lines = [
        f"{case.name} ({case.category}, {case.honest} candidate)",
        f"  plain pytest: {'pass' if plain.ok else 'fail'} {sorted(plain.failing)}",
        f"  verifier:     {'pass' if sandbox.ok else 'fail'} {sorted(got)}  [{sandbox.note}]",
    ]
    if case.difference:
        lines.append(f"  intended difference expected: {sorted(want)} ({case.difference})")
    for test_id, why in sorted(sandbox.why.items()):
        lines.append(f"    verifier {test_id}: {why}")
    return "\n".join(lines)
