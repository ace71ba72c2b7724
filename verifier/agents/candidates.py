"""Where the latest candidate comes from: the source of truth, never the grader's retyping.

A candidate reader takes the working agent's state (what `agent.invoke(...)` returns, or
the state RubricMiddleware hands `build_grader_state`) and returns the current candidate's
source, or None, or raises `NoCandidate("why")` to say why there is none. Built in:

- `CodeBlock()` (the default): the working model's last answer. The last fenced block
  tagged `python`/`py` (any case) or untagged that parses as Python; with no fences at all,
  the whole answer when it parses as Python and defines something (the seed chapter asks
  the working model for source "without Markdown fences").
- `StateFile("/solution.py")`: a file in the Deep Agents file state.
- `StateFiles("/pkg/")`: every file under a folder of the file state: a multi-file candidate
  (a package, or several modules), verified as a tree (`candidate_sha256` is its tree digest).

A reader returns source text, or for a folder a mapping of relative path -> text;
`verifier.inputs.candidate_from` turns either into the `Candidate` the tool verifies and the gate hashes.

`grader_state` turns the reader's answer into the fields the evidence tool reads from the
grader's state.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NotRequired, Protocol

from langchain.agents import AgentState
from langchain_core.messages import AIMessage, BaseMessage

from verifier.errors import InvalidInput, VerifierError
from verifier.inputs import candidate_from

GRADER_NAME = "rubric_grader"
#: Info strings of fenced blocks that may hold the candidate (compared in lower case).
PYTHON_TAGS = frozenset({"", "python", "py", "python3", "py3"})
_OPENING = re.compile(r"^ {0,3}(`{3,}|~{3,})[ \t]*([^`\s]*)[^`]*$")
_FIX = (
    "If the candidate lives elsewhere, pass verified_rubric(candidate=StateFile('/path.py')) for a file in "
    "the agent's file state, candidate=SandboxFile(sandbox, '/workspace/path.py') (or SandboxFiles for a "
    "folder) for its DockerSandbox, or candidate=your_reader (a function state -> source)."
)


class NoCandidate(VerifierError):
    """Raised by a candidate reader to say why the state holds no candidate (shown to the grader and the user).

    `reason` is trusted text: fixed templates and the reader's own settings (the paths it was
    told to read), never text the agent chose. Anything the agent chose (file names in its
    sandbox or file state, a code block's info string, an error from its sandbox) goes in
    `untrusted`, which the evidence tool shows only inside its untrusted fence.
    """

    def __init__(self, reason: str, *, untrusted: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.untrusted = untrusted


class VerifierGraderState(AgentState):  # type: ignore[type-arg]
    """Extra keys of the grader's state: what the evidence tool verifies, and for which grading pass."""

    candidate_source: NotRequired[str | dict[str, str] | None]
    candidate_sha256: NotRequired[str | None]
    candidate_missing: NotRequired[str | None]
    candidate_missing_untrusted: NotRequired[str | None]
    grading_scope: NotRequired[str | None]
    grading_thread_id: NotRequired[str | None]
    grading_iteration: NotRequired[int]


#: What a reader returns: source text, or a folder as relative path -> text.
CandidateText = str | Mapping[str, str]


def digest_of(text: CandidateText | None) -> str | None:
    """`candidate_sha256` of a reader's answer (what the evidence for it will carry); None for
    none, or for a folder whose paths are refused (its evidence says why)."""
    if text is None:
        return None
    try:
        return candidate_from(text).sha256
    except InvalidInput:
        return None


class CandidateSource(Protocol):
    def __call__(self, state: Mapping[str, Any]) -> CandidateText | None:
        """The current candidate's source in the working agent's state, or None (or raise NoCandidate)."""


def _text(message: BaseMessage) -> str:
    return message.text  # LangChain's own join of the text parts of any content form


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """(info string in lower case, body) of each fenced block, in order (CommonMark fences:
    ``` or ~~~, closed by a fence of the same character at least as long; an unclosed
    block runs to the end)."""
    blocks: list[tuple[str, str]] = []
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        m = _OPENING.match(lines[i].rstrip("\r\n"))
        if m is None:
            i += 1
            continue
        fence, info = m.group(1), m.group(2).lower()
        body: list[str] = []
        i += 1
        while i < len(lines):
            stripped = lines[i].strip()
            if stripped.startswith(fence[0] * len(fence)) and set(stripped) == {fence[0]}:
                break
            body.append(lines[i])
            i += 1
        blocks.append((info, "".join(body)))
        i += 1
    return blocks


def _parses(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError):
        return None


def _defines_something(tree: ast.Module) -> bool:
    """A bare word or sentence fragment can parse as Python; a candidate defines or imports something."""
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign, ast.AnnAssign, ast.Import, ast.ImportFrom)
    return any(isinstance(node, kinds) for node in tree.body)


def candidate_in_text(text: str) -> str:
    """The candidate in one answer of the working model; raises NoCandidate with the reason."""
    blocks = fenced_blocks(text)
    if blocks:
        python = [body for info, body in blocks if info in PYTHON_TAGS]
        if not python:
            tags = ", ".join(sorted({info or "untagged" for info, _ in blocks}))
            raise NoCandidate(
                f"the working model's last answer has {len(blocks)} code block(s), none tagged python. {_FIX}",
                untrusted=f"the blocks' tags: {tags}",
            )
        for body in reversed(python):
            if _parses(body) is not None:
                return body
        raise NoCandidate(
            f"none of the {len(python)} python block(s) in the working model's last answer parses as Python. {_FIX}"
        )
    tree = _parses(text)
    if tree is not None and _defines_something(tree):
        return text
    raise NoCandidate(
        "the working model's last answer has no code block and is not Python source on its own "
        f"(ask for source without fences, or in a ```python block). {_FIX}"
    )


def last_answer(messages: Sequence[BaseMessage]) -> AIMessage | None:
    """The working model's last message with text (revision requests come from the grader, not the model)."""
    for message in reversed(messages):
        if isinstance(message, AIMessage) and message.name != GRADER_NAME and _text(message).strip():
            return message
    return None


def latest_code_block(messages: Sequence[BaseMessage]) -> str | None:
    """The candidate in the working model's last answer, or None (see `candidate_in_text`)."""
    try:
        return CodeBlock()({"messages": list(messages)})
    except NoCandidate:
        return None


@dataclass(frozen=True)
class CodeBlock:
    """The candidate is in the working model's last answer: the last python block that
    parses, or the whole answer when it has no fences and parses as Python."""

    def __call__(self, state: Mapping[str, Any]) -> str | None:
        message = last_answer(list(state.get("messages") or []))
        if message is None:
            raise NoCandidate(f"the working model has not answered with any text yet. {_FIX}")
        return candidate_in_text(_text(message))


@dataclass(frozen=True)
class StateFile:
    """The candidate is a file in the Deep Agents file state, e.g. StateFile("/solution.py")."""

    path: str

    def __call__(self, state: Mapping[str, Any]) -> str | None:
        files = state.get("files") or {}
        data = files.get(self.path)
        if data is None:
            have = ", ".join(str(name) for name in sorted(files)[:5]) or "none"
            raise NoCandidate(
                f"the agent's file state has no {self.path} ({len(files)} other files); "
                "point StateFile at the file the working model writes, or pass a custom reader",
                untrusted=f"files in the agent's state: {have}",
            )
        content = data.get("content") if isinstance(data, Mapping) else data
        if isinstance(content, list):  # older deepagents kept a list of lines
            return "\n".join(str(line) for line in content)
        return None if content is None else str(content)


@dataclass(frozen=True)
class StateFiles:
    """The candidate is every file under `folder` in the Deep Agents file state (a multi-file
    candidate: a package, or several modules), e.g. StateFiles("/src/")."""

    folder: str = "/"

    def __call__(self, state: Mapping[str, Any]) -> dict[str, str] | None:
        root = "/" + self.folder.strip("/") + "/" if self.folder.strip("/") else "/"
        files: dict[str, str] = {}
        for path, data in (state.get("files") or {}).items():
            if not str(path).startswith(root):
                continue
            content = data.get("content") if isinstance(data, Mapping) else data
            if isinstance(content, list):  # older deepagents kept a list of lines
                content = "\n".join(str(line) for line in content)
            if content is not None:
                files[str(path)[len(root) :]] = str(content)
        if not any(p.endswith(".py") for p in files):
            raise NoCandidate(
                f"the agent's file state has no Python file under {root}; point StateFiles at the folder the "
                "working model writes, or pass a custom reader"
            )
        return files


@dataclass(frozen=True)
class Latest:
    """What a reader found: the candidate, or why there is none (`missing`, trusted) with the
    agent-chosen detail (`missing_untrusted`, for the untrusted fence only)."""

    code: CandidateText | None
    missing: str | None = None
    missing_untrusted: str = ""


def read_candidate(source: CandidateSource, state: Mapping[str, Any]) -> Latest:
    """The latest candidate from any reader, or why there is none."""
    try:
        code = source(state)
    except NoCandidate as exc:
        return Latest(None, exc.reason, exc.untrusted)
    if code is None:
        return Latest(None, f"the candidate reader found no candidate in the agent's state. {_FIX}")
    try:
        candidate_from(code)
    except InvalidInput as exc:  # a folder path such as `a\\b.py`, which a sandbox may hold
        return Latest(None, str(exc), exc.detail_untrusted)
    return Latest(code)


def read_latest(source: CandidateSource, state: Mapping[str, Any]) -> tuple[CandidateText | None, str | None]:
    """(candidate source, None) or (None, why there is none: trusted text) from any reader."""
    latest = read_candidate(source, state)
    return latest.code, latest.missing


def grader_state(
    source: CandidateSource,
    state: Mapping[str, Any],
    iteration: int,
    *,
    scope: str | None = None,
    thread_id: str | None = None,
) -> dict[str, Any]:
    """What `build_grader_state` hands the grader: the latest candidate and the grading pass it belongs to."""
    latest = read_candidate(source, state)
    return {
        "candidate_source": latest.code,
        "candidate_sha256": digest_of(latest.code),
        "candidate_missing": latest.missing,
        "candidate_missing_untrusted": latest.missing_untrusted,
        "grading_scope": scope,
        "grading_thread_id": thread_id,
        "grading_iteration": iteration,
    }
