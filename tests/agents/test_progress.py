"""The progress view prints the grader's explanation, which may quote the candidate."""

from __future__ import annotations

from io import StringIO

from rich.console import Console

from verifier.agents.progress import GradingProgress


def test_candidate_text_in_an_explanation_is_visible_and_not_markup() -> None:
    out = StringIO()
    progress = GradingProgress(Console(file=out, width=300, force_terminal=False))
    explanation = "the candidate printed \x1b[2Jcleared [bold red]PASSED[/] \u202eevil\nsecond line"
    progress.handle(
        (
            "custom",
            {"type": "rubric_evaluation_end", "iteration": 0, "result": "needs_revision", "explanation": explanation},
        )
    )
    text = out.getvalue()
    assert "\x1b" not in text and "\u202e" not in text
    assert "\\x1b[2Jcleared [bold red]PASSED[/]" in text and "\\u202eevil" in text
    assert text.count("\n") == 1  # one line per round
    assert progress.verdicts == ["needs_revision"]
