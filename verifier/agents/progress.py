"""Live progress of grading rounds from the middleware's custom stream events.

The grader's explanation may quote candidate-controlled text: it is shown on one line,
with control and invisible characters escaped (`verifier.text.one_line`), and with rich
markup escaped."""

from __future__ import annotations

from collections.abc import AsyncIterable, Iterable, Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape

from verifier.text import one_line

STYLE = {
    "satisfied": "bold green",
    "needs_revision": "yellow",
    "max_iterations_reached": "red",
    "failed": "red",
    "grader_error": "bold red",
}


def _events(chunk: Any) -> list[Mapping[str, Any]]:
    """Custom events out of a stream chunk: a bare event, ("custom", event), or (ns, "custom", event)."""
    if isinstance(chunk, Mapping) and "type" in chunk:
        return [chunk]
    if isinstance(chunk, tuple) and len(chunk) >= 2 and chunk[-2] == "custom" and isinstance(chunk[-1], Mapping):
        return [chunk[-1]]
    return []


class GradingProgress:
    """Prints one line per grading round; collects the verdicts it saw."""

    def __init__(self, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        self.verdicts: list[str] = []

    def handle(self, chunk: Any) -> None:
        for event in _events(chunk):
            kind = event.get("type")
            if kind == "rubric_evaluation_start":
                self.console.print(f"[dim]grading round {escape(one_line(str(event.get('iteration', '?')), 10))} …[/]")
            elif kind == "rubric_evaluation_end":
                result = str(event.get("result"))
                self.verdicts.append(result)
                explanation = escape(one_line(str(event.get("explanation", "")), 160))
                shown = escape(one_line(result, 40))
                iteration = escape(one_line(str(event.get("iteration", "?")), 10))
                self.console.print(f"round {iteration}: [{STYLE.get(result, 'bold')}]{shown}[/] {explanation}")

    def follow(self, stream: Iterable[Any]) -> list[Any]:
        """Consume a sync stream (e.g. agent.stream(..., stream_mode=["custom", "values"]))."""
        chunks = []
        for chunk in stream:
            self.handle(chunk)
            chunks.append(chunk)
        return chunks

    async def afollow(self, stream: AsyncIterable[Any]) -> list[Any]:
        chunks = []
        async for chunk in stream:
            self.handle(chunk)
            chunks.append(chunk)
        return chunks
