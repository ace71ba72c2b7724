"""A batch's files (pure and on small real git repositories, with the review stood in): SWE-bench's
prediction formats, `--repos-dir`, the model-folder mapping, SWE-bench's own report files
(compared with tests/review/swebench_shapes.py, written from SWE-bench's harness source) and
what shared files carry of the host."""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from tests.review import swebench_shapes as shapes
from tests.review.batch_stand_in import TEST, StandIn
from tests.review.repos import make_repo
from verifier.review import batch
from verifier.review.batch import BatchRequest, BatchSummary, run_batch
from verifier.review.instances import BadRecord, load_instances, load_predictions, model_folder, model_name

NAMES = [
    "m", "acme/m", "acme__m", "acme_/m", "acme/_m", "a___b", "a//b", "/lead", "trail/", "_", "__", "/",
    ".hidden", "..", "a/../b", "swebench", "SWEbench", "100%", "%41", "sp ace", "tab\tname",
    "caf\u00e9", unicodedata.normalize("NFD", "caf\u00e9"), "\u6a21\u578b", "gpt-4o_2024-05-13", "x" * 60,
]  # fmt: skip


def test_model_folders_are_one_to_one_reversible_and_safe() -> None:
    folders = [model_folder(n) for n in NAMES]
    assert len(set(folders)) == len(NAMES)  # injective, also acme/m vs acme__m, NFC vs NFD
    assert [model_name(f) for f in folders] == NAMES  # reversible
    for f in folders:
        assert f.isascii() and "/" not in f and not f.startswith(".") and f.lower() != "swebench"
    # SWE-bench's spelling for plain names
    assert [model_folder(n) for n in ("acme/m", "gpt-4o_2024-05-13", "org/model.v2")] == [
        "acme__m", "gpt-4o_2024-05-13", "org__model.v2",
    ]  # fmt: skip


@pytest.mark.parametrize("folder", ["a___b", "a%5f", "a%4", "%41", "x%2F", "%FF"])
def test_a_folder_no_model_maps_to_is_refused(folder: str) -> None:
    with pytest.raises(ValueError):
        model_name(folder)


def record(iid: str, repo: str, **over: object) -> dict[str, object]:
    return {"instance_id": iid, "repo": repo, "base_commit": "main", "patch": "", "test_patch": "tp\n",
            "FAIL_TO_PASS": json.dumps([TEST]), "PASS_TO_PASS": "[]"} | over  # fmt: skip


def pred(iid: str, patch: str | None = "GOOD\n", model: str = "acme/m") -> dict[str, object]:
    return {"instance_id": iid, "model_patch": patch, "model_name_or_path": model}


FORMATS = {
    "list": lambda rows: json.dumps(rows, indent=2),
    "keyed": lambda rows: json.dumps({r["instance_id"]: r for r in rows}, indent=2),
    "keyed without ids": lambda rows: json.dumps({r["instance_id"]: r | {"instance_id": None} for r in rows}),
    "jsonl": lambda rows: "".join(json.dumps(r) + "\n" for r in rows),
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_predictions_and_instances_in_each_swe_bench_format(tmp_path: Path, fmt: str) -> None:
    rows = [record("a", "."), record("b", ".")]
    if fmt == "keyed without ids":
        rows_text = json.dumps({r["instance_id"]: {k: v for k, v in r.items() if k != "instance_id"} for r in rows})
    else:
        rows_text = FORMATS[fmt](rows)
    (tmp_path / "i.json").write_text(rows_text)
    found = load_instances(tmp_path / "i.json")
    assert list(found) == ["a", "b"]
    preds = [pred("a"), pred("b", None)]
    if fmt == "keyed without ids":
        text = json.dumps({p["instance_id"]: {k: v for k, v in p.items() if k != "instance_id"} for p in preds})
    else:
        text = FORMATS[fmt](preds)
    (tmp_path / "p.json").write_text(text)
    got = load_predictions(tmp_path / "p.json", found)
    assert [(p.instance_id, p.model_patch) for p in got] == [("a", "GOOD\n"), ("b", None)]


def test_a_single_jsonl_record_is_one_prediction(tmp_path: Path) -> None:
    found = load_instances(_write(tmp_path / "i.jsonl", json.dumps(record("a", "."))))
    got = load_predictions(_write(tmp_path / "p.jsonl", json.dumps(pred("a"))), found)
    assert [p.instance_id for p in got] == ["a"]


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('[{"instance_id": "a"', "p.json: not a JSON list (Expecting"),
        ("[1]", "p.json item 1: not a JSON object"),
        ('{"a": {"instance_id": "b", "model_patch": "x", "model_name_or_path": "m"}}', 'key "a": field instance_id'),
        ('{"a": {"model_patch": "x"}}', 'key "a": field model_name_or_path'),
        ("[]", "p.json: no records"),
        ('{"instance_id": "a", "model_patch": 3, "model_name_or_path": "m"}', "line 1: field model_patch"),
        (json.dumps([pred("a", model="Acme/M"), pred("a", model="acme/m")]), "item 2: field model_name_or_path"),
    ],
)
def test_a_bad_predictions_file_is_one_message(tmp_path: Path, text: str, words: str) -> None:
    found = load_instances(_write(tmp_path / "i.jsonl", json.dumps(record("a", "."))))
    with pytest.raises(BadRecord) as info:
        load_predictions(_write(tmp_path / "p.json", text), found)
    assert words in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("rows", "words"),
    [
        ([record("A-1", "."), record("a-1", ".")], "item 2: field instance_id: instance ids A-1 and a-1 differ only"),
        ([record("summary.json", ".")], "item 1: field instance_id"),
        ([record("Summary.JSON", ".")], "item 1: field instance_id"),
    ],
)
def test_instance_ids_whose_folders_would_collide_are_refused(tmp_path: Path, rows: list[object], words: str) -> None:
    with pytest.raises(BadRecord) as info:
        load_instances(_write(tmp_path / "i.json", json.dumps(rows)))
    assert words in str(info.value)


def test_repos_dir_finds_owner_name_clones_in_either_layout(tmp_path: Path) -> None:
    make_repo(tmp_path / "repos" / "acme__flat", {"a.py": ""})
    make_repo(tmp_path / "repos" / "acme" / "nested", {"a.py": ""})
    path = _write(tmp_path / "i.json", json.dumps([record("a", "acme/flat"), record("b", "acme/nested")]))
    found = load_instances(path, tmp_path / "repos")
    assert (
        found["a"].repo == str((tmp_path / "repos" / "acme__flat").resolve()) and found["a"].repo_given == "acme/flat"
    )
    assert found["b"].repo == str((tmp_path / "repos" / "acme" / "nested").resolve())
    make_repo(tmp_path / "repos" / "acme" / "flat", {"a.py": ""})  # now both layouts: which one is meant?
    with pytest.raises(BadRecord, match=r"item 1: field repo: acme/flat: both .* exist; keep one"):
        load_instances(path, tmp_path / "repos")


@pytest.mark.parametrize(
    ("repo", "repos_dir", "words"),
    [
        ("acme/none", True, "field repo: acme/none: no clone at"),
        ("../etc", True, "is not owner/name"),
        ("acme/..", True, "is not owner/name"),
        ("a/b/c", True, "is not owner/name"),
        ("acme/none", False, "give --repos-dir DIR"),
    ],
)
def test_a_repo_that_cannot_be_found_is_one_message(tmp_path: Path, repo: str, repos_dir: bool, words: str) -> None:
    (tmp_path / "repos").mkdir()
    with pytest.raises(BadRecord) as info:
        load_instances(
            _write(tmp_path / "i.json", json.dumps([record("a", repo)])), tmp_path / "repos" if repos_dir else None
        )
    assert words in str(info.value)


@pytest.mark.parametrize(
    ("name", "text", "words"),
    [
        ("p.json", "[{", "--predictions: "),
        ("p.json", '{"a": 1}', "--predictions: "),
        ("p.json", "[]", "no records"),
    ],
)
def test_cli_bad_predictions_file_is_one_line_exit_2(tmp_path: Path, name: str, text: str, words: str) -> None:
    make_repo(tmp_path / "repos" / "acme__r", {"a.py": ""})
    inst = _write(tmp_path / "i.json", json.dumps([record("a", "acme/r")]))
    preds = _write(tmp_path / name, text)
    cmd = [sys.executable, "-m", "verifier", "review", "batch", "--instances", str(inst), "--predictions", str(preds),
           "--repos-dir", str(tmp_path / "repos"), "--out-dir", str(tmp_path / "out"), "--no-build"]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], done.stderr
    assert not (tmp_path / "out").exists()


def _swe_batch(tmp_path: Path, host_details: bool = False) -> tuple[Path, list[BatchSummary]]:
    make_repo(tmp_path / "repos" / "acme" / "r", {"tests/test_a.py": "def test_fix():\n    assert False\n"})
    rows = [record(i, "acme/r") for i in ("a", "b", "c", "d", "e")]
    found = load_instances(_write(tmp_path / "i.json", json.dumps(rows)), tmp_path / "repos")
    preds = load_predictions(
        _write(
            tmp_path / "p.json", json.dumps([pred("a"), pred("b", "bad\n"), pred("c", None), pred("e", "GARBLED\n")])
        ),
        found,
    )
    out = tmp_path / "out"
    summaries = run_batch(
        BatchRequest(instances=found, predictions=preds, out_dir=out, run_id="run1", host_details=host_details)
    )
    return out, summaries


def test_swe_bench_report_files_as_the_harness_writes_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "review", StandIn())
    out, summaries = _swe_batch(tmp_path)
    root = out / "swebench"
    got_a = (root / shapes.INSTANCE_REPORT.format(run_id="run1", model="acme__m", instance_id="a")).read_text()
    assert got_a == json.dumps(shapes.instance_report("a", True, ([TEST], []), ([], [])), indent=4)
    got_b = json.loads(
        (root / shapes.INSTANCE_REPORT.format(run_id="run1", model="acme__m", instance_id="b")).read_text()
    )
    assert got_b == shapes.instance_report("b", False, ([], [TEST]), ([], []))
    # the harness writes no report.json for an empty patch (not run) nor for one that does not apply (an error)
    assert sorted(p.parent.name for p in root.glob("logs/run_evaluation/run1/acme__m/*/report.json")) == ["a", "b"]
    summary = json.loads((root / shapes.RUN_REPORT.format(model="acme__m", run_id="run1")).read_text())
    assert list(summary) == shapes.RUN_REPORT_KEYS
    assert summary == shapes.run_report(total=5, submitted=["a", "b", "c", "e"], resolved=["a"], unresolved=["b"],
                                        empty=["c"], errors=["e"], incomplete=["d"])  # fmt: skip
    assert [(s.resolved, s.not_resolved, s.errors) for s in summaries] == [(1, 1, 2)]


def test_shared_files_carry_no_host_paths_or_names_unless_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(batch, "review", StandIn())
    out, _ = _swe_batch(tmp_path / "private")
    for path in out.rglob("*"):
        if path.is_file() and path.suffix == ".json":
            text = path.read_text()
            assert str(tmp_path) not in text and "ci-runner-1" not in text and "example.invalid" not in text, path
    e = json.loads((out / "acme__m" / "e" / "report.json").read_text())
    assert e["reason"].startswith("bad input: the patch <out-dir>/acme__m/e/patch.diff does not apply"), e["reason"]
    a = json.loads((out / "acme__m" / "a" / "report.json").read_text())["evidence"]
    assert (a["hostname"], a["repository_uri"]) == ("", None)

    out2, _ = _swe_batch(tmp_path / "kept", host_details=True)
    a = json.loads((out2 / "acme__m" / "a" / "report.json").read_text())["evidence"]
    assert (a["hostname"], a["repository_uri"]) == ("ci-runner-1", "https://example.invalid/org/repo")
    assert str(tmp_path) in json.loads((out2 / "acme__m" / "e" / "report.json").read_text())["reason"]


def test_swe_bench_files_are_never_written_through_a_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(batch, "review", StandIn())
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "out" / "swebench" / "logs").mkdir(parents=True)
    (tmp_path / "out" / "swebench" / "logs" / "run_evaluation").symlink_to(outside)
    (tmp_path / "out" / "swebench" / "acme__m.run1.json").symlink_to(outside / "x.json")
    out, _ = _swe_batch(tmp_path)
    assert list(outside.iterdir()) == []
    assert (out / "swebench" / "logs" / "run_evaluation" / "run1" / "acme__m" / "a" / "report.json").is_file()
    assert not (out / "swebench" / "acme__m.run1.json").is_symlink()


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--run-id", "../x"], "--run-id: letters, digits"),
        (["--repos-dir", "nowhere"], "--repos-dir: nowhere is not a folder"),
    ],
)
def test_cli_bad_batch_options_are_one_line_exit_2(tmp_path: Path, extra: list[str], words: str) -> None:
    inst = _write(tmp_path / "i.json", json.dumps([record("a", ".")]))
    cmd = [sys.executable, "-m", "verifier", "review", "batch", "--instances", str(inst), "--gold",
           "--out-dir", str(tmp_path / "out"), "--no-build", *extra]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], done.stderr
    assert not (tmp_path / "out").exists()
