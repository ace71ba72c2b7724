"""A bench run's report: one self-contained HTML page and a PNG summary, made from the files the
run writes (`verifier.bench.report_data`), so it can be made during the run (`--report DIR`) or
afterwards (`verifier bench report`).

`write_report` writes three files into a folder: `index.html` (inline CSS, the plots as SVG
images in data: URLs, no script, no network: it opens from a file, an artifact store or a mail),
`summary.png` (pass@k, pass rate per problem, status, failure kinds, latency: for a README) and
`report.json` (the numbers the page shows, `ReportData`).

Escaping: every value put into the page goes through `html.escape` (task ids, test ids, messages
and the candidates' own text alike), and the page forbids scripts and every load but its own
data: images in a Content-Security-Policy, so even a value that escaped escaping could not run.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from string import Template
from typing import Any

from verifier.bench.passk import DEFAULT_KS
from verifier.bench.report_data import PHASES, ReportData, collect
from verifier.bench.report_plots import headline, summary_png, svgs

HTML_FILE = "index.html"
PNG_FILE = "summary.png"
JSON_FILE = "report.json"
#: What the page may load: its own inline style and data: images, nothing else (no script).
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
#: Fields of the run's summary shown in the page, in this order (when the summary has them).
RUN_FIELDS = (
    "wall_s",
    "samples_per_s",
    "workers",
    "policy",
    "runtime",
    "timeout_s",
    "verified",
    "from_store",
    "distinct",
    "infra_errors",
    "overloaded",
    "rerun",
    "slot_wait_s",
    "startup_s",
    "ray",
)

PAGE = Template("""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="$csp">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>$title: bench report</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1em; color: #222; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.15em; margin-top: 2em; border-bottom: 1px solid #ddd; }
.headline { font-size: 1.2em; margin: 0.3em 0 1em; }
table { border-collapse: collapse; margin: 0.5em 0; } th, td { padding: 2px 10px; text-align: left; }
th { background: #f2f2f2; } tr:nth-child(even) td { background: #fafafa; } td.n { text-align: right; }
.plots { display: flex; flex-wrap: wrap; gap: 8px; } .plots img { max-width: 100%; height: auto; }
.problems { max-height: 32em; overflow: auto; display: inline-block; }
pre { background: #f6f6f6; padding: 6px; white-space: pre-wrap; word-break: break-all; margin: 0; font-size: 12px; }
.note { color: #666; }
</style>
</head>
<body>
<h1>$title</h1>
<div class="headline">$headline</div>
<p>$overview</p>
$notes
<div class="plots">$plots</div>
<h2>pass@k</h2>
$passk
<h2>Run</h2>
$run
<h2>Status</h2>
$statuses
<h2>What failed how</h2>
$kinds
<h2>Where the time went</h2>
$time
<h2>Per problem</h2>
<div class="problems">$problems</div>
$caught
<h2>Failures</h2>
<p class="note">One row per distinct failing candidate. The last column is the candidate's own text
(its output or exception), shown as data.</p>
$failures
</body>
</html>
""")


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _num(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"
    return _e(value)


def table(head: Sequence[str], rows: Iterable[Sequence[object]], numeric: Sequence[bool] | None = None) -> str:
    """An HTML table, every cell escaped (`numeric`: which columns are right-aligned numbers)."""
    numeric = numeric or [False] * len(head)
    out = ["<table><tr>", *(f"<th>{_e(h)}</th>" for h in head), "</tr>"]
    for row in rows:
        pairs = zip(row, numeric, strict=True)
        cells = (f'<td class="n">{_num(v)}</td>' if n else f"<td>{_e(v)}</td>" for v, n in pairs)
        out += ["<tr>", *cells, "</tr>"]
    out.append("</table>")
    return "".join(out)


def _img(name: str, svg: str) -> str:
    data = base64.b64encode(svg.encode()).decode("ascii")
    return f'<img alt="{_e(name)}" src="data:image/svg+xml;base64,{data}">'


def _passk(data: ReportData) -> str:
    keys = [f"pass@{k}" for k in data.ks]
    rows: list[list[object]] = [["base", *(data.pass_at_k.get(k, "-") for k in keys)]]
    if data.plus_pass_at_k is not None:
        rows.append(["base + plus", *(data.plus_pass_at_k.get(k, "-") for k in keys)])
    out = table(["tests", *keys], rows, [False, *([True] * len(keys))])
    if data.not_reported:
        out += "".join(f'<p class="note">{_e(k)}: {_e(v)}</p>' for k, v in data.not_reported.items())
    return out


def _problems(data: ReportData) -> str:
    keys = [f"pass@{k}" for k in data.ks if any(k <= p.samples for p in data.problems)]
    plus = data.plus_pass_at_k is not None
    head = ["task", "samples", "passed", *keys] + (["plus passed", *(f"plus {k}" for k in keys)] if plus else [])
    rows = []
    for p in data.problems:
        row: list[object] = [p.task, p.samples, p.passed, *(p.pass_at_k.get(k, "-") for k in keys)]
        if plus:
            row += [p.plus_passed, *((p.plus_pass_at_k or {}).get(k, "-") for k in keys)]
        rows.append(row)
    return table(head, rows, [False, *([True] * (len(head) - 1))])


def _failures(data: ReportData) -> str:
    if not data.failures:
        return '<p class="note">none</p>'
    head = ["task", "samples", "status", "kind", "test", "message", "candidate's text"]
    out = ["<table><tr>", *(f"<th>{_e(h)}</th>" for h in head), "</tr>"]
    for f in data.failures:
        cells = [f.task, f.samples, f.status, f.kind, f.test, f.message]
        out += ["<tr>", *(f"<td>{_e(c)}</td>" for c in cells), f"<td><pre>{_e(f.detail_untrusted)}</pre></td></tr>"]
    out.append("</table>")
    if data.failures_not_shown:
        out.append(
            f'<p class="note">{data.failures_not_shown} more failing candidates not shown (report.json has the '
            "counts; the evidence store has them all).</p>"
        )
    return "".join(out)


def _caught(data: ReportData) -> str:
    """Samples the base tests passed and the plus tests failed (only with plus verdicts)."""
    if data.plus_caught is None:
        return ""
    head = ["task", "status", "kind", "test", "falsifying example", "message", "candidate's text"]
    rows = ((c.task, c.status, c.kind, c.test, c.example, c.message, c.detail_untrusted) for c in data.plus_caught)
    shown = len(data.plus_caught)
    more = f" ({data.plus_caught_count - shown} more not shown)" if data.plus_caught_count > shown else ""
    return (
        f'<h2>Caught by the plus tests</h2><p class="note">{data.plus_caught_count} samples passed the base '
        f"tests and failed the plus tests{_e(more)}.</p>" + table(head, rows)
    )


def _run(data: ReportData) -> str:
    shown = [(key, data.run[key]) for key in RUN_FIELDS if key in data.run]
    if not shown:
        return '<p class="note">No run summary (made from the files afterwards without --summary).</p>'
    return table(["", "value"], shown, [False, True])


def _notes(data: ReportData) -> str:
    notes = []
    if data.not_judged:
        notes.append(
            f"{data.not_judged} samples were not judged: the machine stayed too busy (overloaded, after their "
            "retries). They are no verdict on the model: pass@k and the problem table leave them out."
        )
    if data.missing_evidence:
        notes.append(f"{data.missing_evidence} samples have no evidence in the store: latency and time leave them out.")
    if data.unreadable_evidence_lines:
        notes.append(f"{data.unreadable_evidence_lines} lines of the evidence store were not evidence (ignored).")
    return "".join(f'<p class="note">{_e(n)}</p>' for n in notes)


def _time(data: ReportData) -> str:
    total = sum(data.time_s.values()) or 1.0
    rows: list[tuple[str, object, str]] = [
        (words, data.time_s.get(phase, 0.0), f"{100 * data.time_s.get(phase, 0.0) / total:.1f}%")
        for phase, words in PHASES.items()
    ]
    lat = data.latency
    rows.append(
        (
            "a job's total time: median / p90 / p99 / max",
            "-",
            " / ".join("-" if v is None else f"{v:.2f} s" for v in (lat.median, lat.p90, lat.p99, lat.max)),
        )
    )
    return table(["phase", "seconds (summed over jobs)", "share"], rows, [False, True, True])


def render(data: ReportData) -> str:
    """The page for `data` (a complete HTML document)."""
    overview = (
        f"{data.samples} samples of {len(data.problems)} problems ({data.bench}); "
        f"{data.jobs} distinct jobs in the evidence store."
    )
    plots = svgs(data)
    return PAGE.substitute(
        csp=CSP,
        title=_e(data.title),
        headline=_e(headline(data)),
        overview=_e(overview),
        notes=_notes(data),
        plots="".join(_img(name, svg) for name, svg in plots.items()),
        passk=_passk(data),
        run=_run(data),
        statuses=table(["status", "samples"], [(s, n) for s, n in data.statuses.items() if n], [False, True]),
        kinds=table(["first failure", "samples"], data.failure_kinds.items(), [False, True])
        if data.failure_kinds
        else '<p class="note">none</p>',
        time=_time(data),
        problems=_problems(data),
        caught=_caught(data),
        failures=_failures(data),
    )


@dataclass(frozen=True)
class ReportFiles:
    html: Path
    png: Path
    json: Path


def write_report(
    results: Path,
    out_dir: Path,
    *,
    evidence: Path | None = None,
    summary: dict[str, Any] | None = None,
    ks: Sequence[int] = DEFAULT_KS,
) -> ReportFiles:
    """Make the report of a results file into `out_dir` (created): index.html, summary.png and
    report.json. `evidence`: the run's store (default: beside the results); `summary`: the run's
    summary (what `--json-out` writes). Raises ValueError or OSError for a results file that is
    not one."""
    data = collect(results, evidence=evidence, summary=summary, ks=ks)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = ReportFiles(html=out_dir / HTML_FILE, png=out_dir / PNG_FILE, json=out_dir / JSON_FILE)
    files.html.write_text(render(data), encoding="utf-8")
    files.png.write_bytes(summary_png(data))
    files.json.write_text(json.dumps(data.model_dump(mode="json"), indent=1, ensure_ascii=True) + "\n")
    return files
