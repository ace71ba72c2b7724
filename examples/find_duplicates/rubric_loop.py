"""The tutorial's find_duplicates scenario, end to end, with the real sandbox.

A working model writes find_duplicates; a grading model (Deep Agents' RubricMiddleware)
calls the sandboxed `run_test_suite` evidence tool on the latest candidate, the middleware
feeds the failures back, and the fail-closed gate accepts only a `satisfied` verdict backed
by passing evidence for the final candidate's exact bytes.

Needs the agents extra (pip install 'sandboxed-verifier[agents]') and a running Docker
engine; the sandbox image is built on first use (about a minute).

    python examples/find_duplicates/rubric_loop.py              # offline: scripted models
    WORKING_MODEL=openai:gpt-5.1 GRADER_MODEL=openai:gpt-5.1-mini python ... --online

Offline, both models are scripted: the worker's first answer is the set-based bug
(buggy_set.py), its answer after feedback is good.py; the grader calls the tool and bases
its verdict on what the tool reported. The story of each round is printed (80 columns);
the last line is one JSON object with the outcome. Runs are recorded in the default run
database, so `verifier runs report` shows them afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

HERE = Path(__file__).resolve().parent
SUITE = HERE / "suite"
WIDTH = 80
TASK = """Implement find_duplicates(values). Return each duplicated value once,
ordered by where it appears for the second time. Support unhashable values,
do not mutate the input, and reply with the source in one ```python block."""
RUBRIC = """- Before returning satisfied, call run_test_suite for the latest candidate.
- The run_test_suite result must contain ok: true and latest candidate: yes.
- The function is named find_duplicates and accepts one list argument.
- Each duplicated value appears exactly once, ordered by its second occurrence.
- Unhashable values such as nested lists are supported, and the input is not mutated."""
CRITERIA = (
    "run_test_suite reports ok: true for the latest candidate",
    "find_duplicates meets the task (order, uniqueness, unhashable values, no mutation)",
)


@dataclass(frozen=True)
class Scenario:
    """One task graded with sandboxed evidence: its suite, what the worker is asked, the rubric,
    and, offline, the scripted worker's two answers (a wrong one, then after feedback a good one)."""

    title: str
    suite: Path
    task: str
    rubric: str
    criteria: tuple[str, ...]
    first: Path
    first_words: str
    second: Path
    second_words: str

    @property
    def scripted(self) -> str:
        return (
            f"scripted (offline, no API key): the worker answers with {self.first.name}, then, "
            f"after the grader's feedback, with {self.second.name}; the grader calls run_test_suite and "
            "bases its verdict on what the tool reported"
        )


FIND_DUPLICATES = Scenario(
    title="find_duplicates",
    suite=SUITE,
    task=TASK,
    rubric=RUBRIC,
    criteria=CRITERIA,
    first=HERE / "buggy_set.py",
    first_words="Here is my implementation:",
    second=HERE / "good.py",
    second_words="Revised to compare with == so lists work:",
)


def _block(path: Path) -> str:
    return "```python\n" + path.read_text() + "```"


def models(online: bool, scenario: Scenario = FIND_DUPLICATES) -> tuple[Any, Any]:
    if online:
        from langchain.chat_models import init_chat_model

        working = init_chat_model(os.environ["WORKING_MODEL"])
        return working, init_chat_model(os.environ.get("GRADER_MODEL", os.environ["WORKING_MODEL"]))
    from verifier.agents.scripted import ScriptedChatModel, evidence_grader, revising_worker

    worker = revising_worker(
        scenario.first_words + "\n" + _block(scenario.first),
        scenario.second_words + "\n" + _block(scenario.second),
    )
    return ScriptedChatModel(responder=worker), ScriptedChatModel(responder=evidence_grader(scenario.criteria))


# -- the story -------------------------------------------------------------------------
class Story:
    """Prints the run for a reader: plain text in WIDTH columns, candidate text made visible."""

    def __init__(self) -> None:
        from rich.console import Console

        self.console = Console(width=WIDTH, highlight=False, soft_wrap=False)

    def rule(self, title: str) -> None:
        from rich.rule import Rule

        self.console.print(Rule(title, align="left", style="dim"))

    def line(self, text: str = "", style: str = "", indent: int = 2) -> None:
        """One line, cut (never wrapped) to the width."""
        from rich.text import Text

        self.console.print(Text(" " * indent + text, style=style), no_wrap=True, overflow="ellipsis", crop=True)

    def para(self, text: str, indent: int = 2, style: str = "") -> None:
        """Prose wrapped at word boundaries."""
        for raw in text.splitlines() or [""]:
            wrapped = textwrap.wrap(raw, WIDTH - indent - 2, subsequent_indent="  ") or [""]
            for piece in wrapped:
                self.line(piece, style=style, indent=indent)

    def code(self, source: str) -> None:
        from verifier.text import visible

        for raw in visible(source).rstrip("\n").splitlines():
            self.line(raw, style="cyan", indent=4)


def shown_failures(failures: list[Any]) -> list[Any]:
    """The first failure, and the first one with a falsifying example when that is another."""
    shown = failures[:1]
    with_example = next((f for f in failures if f.falsifying_example), None)
    if with_example is not None and with_example not in shown:
        shown.append(with_example)
    return shown


def detail_lines(detail: str) -> list[tuple[str, str]]:
    """From a pytest failure detail (candidate-controlled): the failing call and the error."""
    lines = detail.splitlines()
    calls = [ln[1:].strip() for ln in lines if ln.startswith(">") and "(" in ln]
    call = next((c for c in calls if not c.startswith("def ")), None)
    error = next((ln[1:].strip() for ln in lines if ln.startswith("E ")), None)
    return [(label, text) for label, text in (("at", call), ("candidate said", error)) if text]


def tell(
    story: Story,
    outcome: dict[str, Any],
    result: dict[str, Any],
    rubric: Any,
    online: bool,
    scenario: Scenario = FIND_DUPLICATES,
) -> None:
    """Each round: the worker's code, the evidence, the verdict and the feedback; then the decision."""
    from verifier.agents.candidates import GRADER_NAME, NoCandidate, candidate_in_text
    from verifier.agents.tools import compact_example
    from verifier.text import one_line, visible

    messages = list(result.get("messages", []))
    answers = [m for m in messages if isinstance(m, AIMessage) and m.name != GRADER_NAME and m.text.strip()]
    feedback = [m for m in messages if isinstance(m, HumanMessage) and m.name == GRADER_NAME]
    run_id = outcome["grading_run_id"]
    evaluations = rubric.recorder.evaluations(run_id) if run_id else []
    calls = rubric.recorder.tool_calls(run_id) if run_id else []

    story.rule(f"{scenario.title}, graded with sandboxed evidence")
    names = f"{os.environ.get('WORKING_MODEL')} / {os.environ.get('GRADER_MODEL', '(same)')}"
    story.para("models: " + (names if online else scenario.scripted))
    story.para(f"suite: {scenario.suite.relative_to(HERE.parent.parent)} (pytest + Hypothesis, in Docker)")
    story.para(f"thread: {outcome['thread_id']}")
    for i, evaluation in enumerate(evaluations):
        story.line()
        story.rule(f"round {i}: the worker's answer")
        if i < len(answers):
            try:
                story.code(candidate_in_text(answers[i].text))
            except NoCandidate as exc:
                story.para("no candidate: " + one_line(exc.reason, 400), style="red")
        story.rule(f"round {i}: evidence from run_test_suite")
        for call in [c for c in calls if c.iteration == evaluation["iteration"]]:
            ev = rubric.recorder.evidence(call.evidence_id)
            status = "ok" if call.ok else call.status
            story.line(f"{status}: {one_line(call.reason, 60)}", style="green" if call.ok else "red")
            story.line(f"candidate {call.candidate_sha256}")
            for failure in shown_failures(ev.failures if ev else []):
                story.line(f"✗ {one_line(failure.test_id, 70)}", style="red")
                story.line(one_line(failure.message, 70), indent=6)
                if failure.falsifying_example:
                    story.para(f"falsifying example: {compact_example(failure.falsifying_example)}", indent=6)
                for label, text in detail_lines(failure.detail_untrusted):
                    story.line(f"{label}: {visible(text, keep_newlines=False)}", style="dim", indent=6)
            if ev and len(ev.failures) > len(shown_failures(ev.failures)):
                story.line(f"... {len(ev.failures) - len(shown_failures(ev.failures))} more failures", indent=4)
        verdict = str(evaluation["result"])
        story.rule(f"round {i}: verdict {verdict}")
        story.para(one_line(str(evaluation.get("explanation", "")), 400))
        if i < len(feedback):
            story.line("feedback the middleware sent to the worker:", style="bold")
            story.para(visible(feedback[i].text), indent=4, style="yellow")
    story.line()
    story.rule("decision (fail-closed gate)")
    accepted = outcome["accepted"]
    story.line("ACCEPTED" if accepted else "REJECTED", style="bold green" if accepted else "bold red")
    story.para(outcome["reason"])
    story.line(f"candidate {outcome['candidate_sha256'] or '-'}")
    story.line(f"evidence  {outcome['evidence_id'] or '-'}")
    story.line(f"run       {run_id or '-'}")
    story.para(f"recorded in {rubric.recorder.display_url} (see `verifier runs report`)")


def run(
    online: bool = False, recorder_url: str | None = None, story: bool = True, scenario: Scenario = FIND_DUPLICATES
) -> dict[str, Any]:
    from deepagents import create_deep_agent
    from langgraph.checkpoint.memory import InMemorySaver

    from verifier.agents import verified_rubric
    from verifier.agents.progress import GradingProgress
    from verifier.agents.recorder import RunRecorder
    from verifier.sandbox import image
    from verifier.sandbox.docker_engine import connect

    image.build(connect())  # a no-op when the image of this recipe exists
    working, grader = models(online, scenario)
    rubric = verified_rubric(model=grader, suite=scenario.suite, max_iterations=3, recorder=RunRecorder(recorder_url))
    agent = create_deep_agent(model=working, middleware=[rubric.middleware], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": f"{scenario.title.replace('_', '-')}-{uuid.uuid4().hex[:8]}"}}
    progress = GradingProgress()
    chunks = progress.follow(
        agent.stream(
            {"messages": [HumanMessage(scenario.task)], "rubric": scenario.rubric},
            config,
            stream_mode=["custom", "values"],
        )
    )
    result = next(c[1] for c in reversed(chunks) if isinstance(c, tuple) and c[0] == "values")
    decision = rubric.decide(result, config)
    run_id = decision.grading_run_id
    outcome = {
        "accepted": decision.accepted,
        "reason": decision.reason,
        "verdicts": [e["result"] for e in rubric.recorder.evaluations(run_id)] if run_id else [],
        "candidate_sha256": decision.candidate_sha256,
        "evidence_id": decision.evidence_id,
        "grading_run_id": run_id,
        "thread_id": config["configurable"]["thread_id"],
        "models": "online" if online else "scripted",
        "recorder": rubric.recorder.display_url,
    }
    if story:
        tell(Story(), outcome, result, rubric, online, scenario)
    rubric.recorder.close()
    return outcome


def main(argv: list[str] | None = None, scenario: Scenario = FIND_DUPLICATES, doc: str | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="\n\n".join((doc or __doc__ or "").split("\n\n")[:3]),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--offline", action="store_true", help="scripted models (the default without WORKING_MODEL)")
    mode.add_argument("--online", action="store_true", help="real models from WORKING_MODEL / GRADER_MODEL")
    parser.add_argument(
        "--recorder",
        default=None,
        help="SQLAlchemy URL of the run recorder (default: the one `verifier runs report` reads)",
    )
    args = parser.parse_args(argv)
    online = args.online or (not args.offline and "WORKING_MODEL" in os.environ)
    if online and "WORKING_MODEL" not in os.environ:
        parser.error("--online needs WORKING_MODEL (provider:model-id)")
    outcome = run(online=online, recorder_url=args.recorder, scenario=scenario)
    print(json.dumps(outcome))
    return 0 if outcome["accepted"] else 1


if __name__ == "__main__":
    sys.exit(main())
