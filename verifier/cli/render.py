"""Rich rendering of evidence. No logic: what to show, not what it means.

Nothing the candidate controls reaches the terminal as it is: trusted fields are single lines
(`verifier.text.one_line`), candidate-controlled text is shown with its control characters as
visible escapes (`verifier.text.visible`), and everything is escaped from rich's markup.
"""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table

from verifier.evidence import Evidence
from verifier.text import one_line, visible

STATUS_STYLE = {"passed": "bold green", "failed": "bold red"}


def _line(text: str, limit: int = 300) -> str:
    return escape(one_line(text, limit))


def evidence(console: Console, ev: Evidence, *, label: str = "", max_failures: int = 5) -> None:
    style = STATUS_STYLE.get(ev.status.value, "bold yellow")
    head = f"[{style}]{'OK' if ev.ok else 'NOT OK'}[/] {_line(label)}  status=[{style}]{ev.status.value}[/]"
    c = ev.counts
    table = Table.grid(padding=(0, 2))
    table.add_row("reason", _line(ev.reason))
    table.add_row("fault", ev.fault.value)
    table.add_row(
        "tests",
        f"{c.passed}/{c.expected} passed, {c.failed} failed, {c.errors} errors, {c.skipped} skipped",
    )
    table.add_row("candidate", ev.candidate_sha256 or "-")
    table.add_row("suite", ev.suite_sha256 or "-")
    if ev.program is not None:
        built = ev.program.compile
        compiled = f"; compile: {_line(built.message)}" if built is not None else ""
        table.add_row("language", f"{ev.program.language} ({', '.join(ev.program.toolchain) or '-'}){compiled}")
    table.add_row("image", ev.image_id or "-")
    if ev.environment is not None:
        env = ev.environment
        table.add_row("packages", f"{_line(', '.join(env.requirements))} ({len(env.packages)} installed)")
    table.add_row("runtime", ev.limits.runtime)
    table.add_row("evidence", ev.evidence_id)
    d = ev.durations
    timing = f"{d.total_s:.2f} s (sandbox {d.sandbox_s:.2f}, runner start {d.runner_start_s:.2f}, tests {d.tests_s:.2f}"
    if d.queue_s >= 0.05:
        timing += f", waited {d.queue_s:.2f} for a slot"
    if d.host_wait_s >= 0.05:
        timing += f", {d.host_wait_s:.2f} waiting for a busy CPU, not charged"
    table.add_row("time", timing + ")")
    if ev.attempts > 1:
        table.add_row("attempts", f"{ev.attempts} (our sandbox failed and the run was repeated)")
    console.print(Panel(table, title=head, title_align="left", expand=False))
    for f in ev.failures[:max_failures]:
        console.print(f"[red]✗[/] {_line(f.test_id)}  [dim]{f.kind.value}[/]: {_line(f.message)}")
        if f.falsifying_example:
            console.print(f"    [cyan]falsifying example[/]: {_line(f.falsifying_example)}")
        lines = [ln for ln in f.detail_untrusted.splitlines() if ln.startswith("E ")]
        if lines:
            shown = escape(visible(lines[0][1:].strip()[:200], keep_newlines=False))
            console.print(f"    [dim]candidate-controlled detail:[/] {shown}")
    if len(ev.failures) > max_failures:
        console.print(f"[dim]... and {len(ev.failures) - max_failures} more failures (use --json for all)[/]")
    if ev.candidate_output_untrusted.strip():
        first = escape(visible(ev.candidate_output_untrusted.strip().splitlines()[0][:200], keep_newlines=False))
        console.print(f"[dim]candidate output (untrusted), first line:[/] {first}")
