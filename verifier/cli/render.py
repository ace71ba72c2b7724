"""Rich rendering of evidence. No logic: what to show, not what it means."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from verifier.evidence import Evidence

STATUS_STYLE = {"passed": "bold green", "failed": "bold red"}


def evidence(console: Console, ev: Evidence, *, label: str = "", max_failures: int = 5) -> None:
    style = STATUS_STYLE.get(ev.status.value, "bold yellow")
    head = f"[{style}]{'OK' if ev.ok else 'NOT OK'}[/] {escape(label)}  status=[{style}]{ev.status.value}[/]"
    c = ev.counts
    table = Table.grid(padding=(0, 2))
    table.add_row("reason", escape(ev.reason))
    table.add_row(
        "tests",
        f"{c.passed}/{c.expected} passed, {c.failed} failed, {c.errors} errors, {c.skipped} skipped",
    )
    table.add_row("candidate", ev.candidate_sha256 or "-")
    table.add_row("suite", ev.suite_sha256 or "-")
    table.add_row("image", ev.image_id or "-")
    table.add_row("evidence", ev.evidence_id)
    d = ev.durations
    table.add_row(
        "time",
        f"{d.total_s:.2f} s (sandbox {d.sandbox_s:.2f}, runner start {d.runner_start_s:.2f}, tests {d.tests_s:.2f})",
    )
    console.print(Panel(table, title=head, title_align="left", expand=False))
    for f in ev.failures[:max_failures]:
        console.print(f"[red]✗[/] {escape(f.test_id)}  [dim]{f.kind.value}[/]: {escape(f.message)}")
        if f.falsifying_example:
            console.print(f"    [cyan]falsifying example[/]: {escape(f.falsifying_example)}")
        if f.detail_untrusted:
            lines = [ln for ln in f.detail_untrusted.splitlines() if ln.startswith("E ")]
            if lines:
                console.print(f"    [dim]candidate-controlled detail:[/] {escape(lines[0][1:].strip()[:200])}")
    if len(ev.failures) > max_failures:
        console.print(f"[dim]... and {len(ev.failures) - max_failures} more failures (use --json for all)[/]")
