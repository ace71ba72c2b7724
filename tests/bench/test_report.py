"""The bench report (`verifier.bench.report`, `verifier bench report`): its numbers, made from a
run's files written by hand (tests/bench/report_files.py), and its escaping of everything a
candidate controls. No engine: the page is made from files. Opening it in a browser:
test_report_browser.py."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.bench.report_files import HOSTILE, HOSTILE_TASK, write_run
from verifier.bench import report
from verifier.bench.report import write_report
from verifier.bench.report_data import collect
from verifier.cli import app

#: Every element the page is made of; anything else in it came from a value that escaped escaping.
PAGE_TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "style",
    "body",
    "h1",
    "h2",
    "div",
    "p",
    "table",
    "tr",
    "th",
    "td",
    "pre",
    "img",
}


class Page(HTMLParser):
    """The page as a browser's parser sees it: its elements, their attributes and its text."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str]] = []
        self.text: list[str] = []
        self.comments: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [(name, value or "") for name, value in attrs]

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str, Path]:
    """One report of the hand-written run with plus verdicts: (report.json, index.html, folder)."""
    folder = tmp_path_factory.mktemp("report")
    files = write_report(write_run(folder, plus=True), folder / "out", summary={"wall_s": 7.5, "workers": 2}, ks=[1, 2])
    return json.loads(files.json.read_text()), files.html.read_text(), folder / "out"


def test_the_numbers_come_from_the_results_and_the_evidence(made: tuple[dict[str, Any], str, Path]) -> None:
    data, _page, _folder = made
    assert data["bench"] == "humaneval" and data["samples"] == 6 and data["jobs"] == 5
    assert data["pass_at_k"] == {"pass@1": pytest.approx((2 / 3) / 3)}
    assert "pass@2" in data["not_reported"]  # one task has a single sample: the reference's rule
    problems = {p["task"]: p for p in data["problems"]}
    assert problems["A"]["pass_at_k"] == {"pass@1": pytest.approx(2 / 3), "pass@2": 1.0}
    assert problems[HOSTILE_TASK]["pass_at_k"] == {"pass@1": 0.0}
    assert data["statuses"]["passed"] == 2 and data["statuses"]["failed"] == 2 and data["statuses"]["timeout"] == 2
    assert data["failure_kinds"] == {"timeout": 2, "assertion": 1, "exception": 1}
    rows = {(f["task"], f["samples"], f["kind"]) for f in data["failures"]}
    assert rows == {("A", 1, "assertion"), ("B", 2, "timeout"), (HOSTILE_TASK, 1, "exception")}
    assert data["latency"]["values"] == [1.0, 1.0, 1.0, 2.0, 4.0] and data["latency"]["median"] == 1.0
    spent = data["time_s"]
    assert spent["queue_s"] == pytest.approx(0.5) and spent["tests_s"] == pytest.approx(6.75)
    assert spent["host_wait_s"] == pytest.approx(0.25) and spent["other_s"] == pytest.approx(0.25)
    assert data["unreadable_evidence_lines"] == 1 and data["missing_evidence"] == 0  # the torn last line
    assert data["run"] == {"wall_s": 7.5, "workers": 2}


def test_base_and_plus_side_by_side(made: tuple[dict[str, Any], str, Path], tmp_path: Path) -> None:
    data, page, _folder = made
    assert data["plus_pass_at_k"] == {"pass@1": pytest.approx((1 / 3) / 3)}
    a = next(p for p in data["problems"] if p["task"] == "A")
    assert a["plus_passed"] == 1 and a["plus_pass_at_k"] == {
        "pass@1": pytest.approx(1 / 3),
        "pass@2": pytest.approx(2 / 3),
    }
    assert "base + plus" in page and "plus passed" in page
    assert data["plus_caught_count"] == 1  # A's second sample: base passed, plus failed
    (caught,) = data["plus_caught"]
    assert (caught["task"], caught["kind"], caught["example"]) == ("A", "assertion", "f(x=-1)")
    assert "Caught by the plus tests" in page and "f(x=-1)" in page
    base_only = collect(write_run(tmp_path), ks=[1, 2])  # the same run without plus verdicts
    assert base_only.plus_pass_at_k is None and all(p.plus_passed is None for p in base_only.problems)
    assert "base + plus" not in report._passk(base_only) and "plus" not in report._problems(base_only)
    assert base_only.plus_caught is None and report._caught(base_only) == ""


def test_what_a_candidate_wrote_is_text_in_the_page(made: tuple[dict[str, Any], str, Path]) -> None:
    _data, page, _folder = made
    parsed = Page(page)
    assert set(parsed.tags) <= PAGE_TAGS, set(parsed.tags) - PAGE_TAGS
    assert not [name for name, _ in parsed.attrs if name.startswith("on")]
    assert not [value for _, value in parsed.attrs if "javascript:" in value]
    assert all(v.startswith("data:image/svg+xml;base64,") for n, v in parsed.attrs if n == "src")
    assert parsed.comments == []
    text = "".join(parsed.text)
    assert HOSTILE in text and HOSTILE_TASK in text  # shown, as data
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page


def test_the_png_and_the_plots(made: tuple[dict[str, Any], str, Path]) -> None:
    _data, page, folder = made
    png = (folder / "summary.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000
    assert page.count('src="data:image/svg+xml;base64,') == 5


def bench_report(*args: str) -> Any:
    return CliRunner().invoke(app, ["bench", "report", *args])


def test_the_report_command_makes_it_afterwards(tmp_path: Path) -> None:
    results = write_run(tmp_path, plus=True)
    (tmp_path / "summary.json").write_text(json.dumps({"wall_s": 3.0, "policy": "reuse"}))
    done = bench_report(str(results), str(tmp_path / "r"), "--summary", str(tmp_path / "summary.json"), "--k", "1")
    assert done.exit_code == 0, done.output
    assert done.stdout.strip() == str(tmp_path / "r" / "index.html")
    data = json.loads((tmp_path / "r" / "report.json").read_text())
    assert data["run"]["wall_s"] == 3.0 and data["ks"] == [1] and data["jobs"] == 5
    assert '<td>policy</td><td class="n">reuse</td>' in (tmp_path / "r" / "index.html").read_text()


def test_the_report_command_refuses_bad_input_in_one_line(tmp_path: Path) -> None:
    results = write_run(tmp_path)
    not_results = tmp_path / "x.jsonl"
    not_results.write_text('{"task_id": "A"}\n')
    (tmp_path / "file").write_text("")
    for args, error in (
        ([str(tmp_path / "none.jsonl"), str(tmp_path / "r")], "RESULTS: results file"),
        ([str(not_results), str(tmp_path / "r")], "x.jsonl:1: not a results line"),
        ([str(results), str(tmp_path / "file")], "DIR:"),
        ([str(results), str(tmp_path / "r"), "--k", "0"], "--k must be positive"),
        ([str(results), str(tmp_path / "r"), "--summary", str(tmp_path / "file")], "is not a JSON"),
        ([str(results), str(tmp_path / "r"), "--evidence", str(tmp_path / "none")], "--evidence"),
    ):
        done = bench_report(*args)
        assert done.exit_code == 2 and error in done.stderr and "Traceback" not in done.output, (args, done.output)
