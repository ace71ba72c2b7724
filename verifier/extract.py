"""The Python code in a model's answer: chat prose, fenced blocks, reasoning, bare code.

Models answer in chat form: a `<think>` section, prose, a ```` ```python ```` block (sometimes
several), more prose. A check needs the program, not the answer. `extract_code(text,
entry_point)` finds it, following EvalPlus's `sanitize` (`evalplus/sanitize.py`) in what it
keeps, with a parser instead of tree-sitter and fenced blocks first:

1. `<think>...</think>` sections are dropped (and everything before a lone `</think>`: a chat
   template may have opened the section in the prompt; an unclosed `<think>` drops the rest:
   the answer never came). Line ends are made `\\n`.
2. The **last fenced block that parses** (```` ``` ```` or `~~~`, three or more, tagged `python`,
   `py`, `python3` or untagged; a block closes on a line of at least its own fence characters
   and nothing else, and when that would cut a string in two, on a later such line whose block
   parses). A block that does not parse, or is tagged another language, is not taken.
3. Else the **whole text**, when it is Python (bare code).
4. Else the **longest run of lines that parses**, starting at a line that begins a definition
   or an import (EvalPlus's `code_extract`, bounded: at most `MAX_PARSES` attempts).
5. With `entry_point`: only what the entry point needs is kept: the module's imports and the
   **dependency closure** of the entry point over the top-level functions, classes and
   assignments (the names each one uses, transitively), in their order, and what the prompt
   defines (a problem's tests may call its helpers); a top-level call, a print, an
   `if __name__ == "__main__":` block are dropped. A text that does not define the
   entry point keeps all of its code (the tests then say what is missing).

Code that is only names and constants (`Sure`, `42`) is not code. A text with no code is
`Extracted(code=None, reason=...)`: a check of it is `invalid_input` with that reason, the
answer's own fault (reward 0.0), never a pass and never a crash.

The text is parsed (`compile(..., ast.PyCF_ONLY_AST)`), never run: parsing executes nothing of it.
Its size (`MAX_CHARS`) and the parsing it may cause (`MAX_PARSES`, `MAX_PARSED_CHARS`) are bounded.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass
from typing import Literal

__all__ = ["MAX_CHARS", "Extracted", "extract_code", "sanitize"]

#: Longest text looked at (a candidate may be at most 1 MiB; an answer is no longer).
MAX_CHARS = 1 << 20
#: Most parse attempts of one text, and the most characters they may parse in all.
MAX_PARSES = 400
MAX_PARSED_CHARS = 4 << 20
#: Fence info strings taken as Python (the first word, lower case; empty: untagged).
PYTHON_TAGS = frozenset({"", "python", "py", "python3"})

Source = Literal["fence", "whole", "lines", "none"]

_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^\n]*?)[ \t]*$")
_ANSI = re.compile(r"\x1b(?:[@-Z\\-_]|\[[0-?]*[ -/]*[@-~])")
_STARTS = re.compile(r"^(?:async[ \t]+def|def|class|import|from)[ \t]|^@")
_THINK = re.compile(r"<think>.*?</think>", re.S | re.I)


@dataclass(frozen=True)
class Extracted:
    """What `extract_code` found: the code, where from, and a trusted sentence saying so."""

    code: str | None
    source: Source
    reason: str

    @property
    def found(self) -> bool:
        return self.code is not None


class _Parser:
    """Parses, within the attempts and characters one text may cost."""

    def __init__(self) -> None:
        self.parses = 0
        self.chars = 0

    @property
    def spent(self) -> bool:
        return self.parses >= MAX_PARSES or self.chars >= MAX_PARSED_CHARS

    def parse(self, code: str) -> ast.Module | None:
        if self.spent or not code.strip():
            return None
        self.parses += 1
        self.chars += len(code)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # SyntaxWarning of an odd escape: not ours to print
                tree = compile(code, "<completion>", "exec", flags=ast.PyCF_ONLY_AST, dont_inherit=True)
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            return None
        return tree if isinstance(tree, ast.Module) and _has_code(tree) else None


def _has_code(tree: ast.Module) -> bool:
    """A statement that is more than a bare name or constant (prose like `Sure` parses)."""
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, (ast.Name, ast.Constant)):
            continue
        return True
    return False


def drop_reasoning(text: str) -> str:
    """The text without its `<think>` sections, with `\\n` line ends and no terminal escapes."""
    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _THINK.sub("", text)
    lower = text.lower()
    close = lower.rfind("</think>")
    if close >= 0:  # opened in the prompt (or by a stray tag): what came before is reasoning
        text = text[close + len("</think>") :]
        lower = lower[close + len("</think>") :]
    opened = lower.find("<think>")
    if opened >= 0:  # never closed: the answer did not come
        text = text[:opened]
    return text


@dataclass(frozen=True)
class _Fence:
    char: str
    length: int
    info: str


def _fence(line: str) -> _Fence | None:
    match = _FENCE.match(line)
    if match is None:
        return None
    fence, info = match.group("fence"), match.group("info")
    if fence[0] == "`" and "`" in info:  # CommonMark: a backtick fence's info has no backtick
        return None
    return _Fence(fence[0], len(fence), info)


def _closes(line: str, opening: _Fence) -> bool:
    found = _fence(line)
    return found is not None and found.char == opening.char and found.length >= opening.length and not found.info


def _blocks(lines: list[str], parser: _Parser, prompt: str) -> list[tuple[int, str | None]]:
    """(end line, code that parses or None) of every Python-tagged or untagged fenced block."""
    found: list[tuple[int, str | None]] = []
    index = 0
    while index < len(lines):
        opening = _fence(lines[index])
        if opening is None:
            index += 1
            continue
        closings = [j for j in range(index + 1, len(lines)) if _closes(lines[j], opening)]
        ends = closings or [len(lines)]  # an unclosed block runs to the end (a cut answer)
        tag = opening.info.split()[0].lower() if opening.info.split() else ""
        if tag not in PYTHON_TAGS:
            index = ends[0] + 1
            continue
        chosen: tuple[int, str | None] = (ends[0], None)
        for end in ends:  # the first closing whose block parses (a fence line inside a string)
            body = "\n".join(lines[index + 1 : end])
            code = _usable(body, parser, prompt)
            if code is not None:
                chosen = (end, code)
                break
            if parser.spent:
                break
        found.append(chosen)
        index = chosen[0] + 1
    return found


def _usable(body: str, parser: _Parser, prompt: str) -> str | None:
    """`body` if it parses; else the prompt and body together if they do (a block that goes on
    from the prompt's signature)."""
    if parser.parse(body) is not None:
        return body
    if prompt and parser.parse(prompt + body) is not None:
        return prompt + body
    return None


def _longest_run(lines: list[str], parser: _Parser) -> str | None:
    """The longest run of lines that parses, starting at a definition or an import."""
    best: tuple[int, str] | None = None
    for start, line in enumerate(lines):
        if not _STARTS.match(line):
            continue
        for end in range(len(lines), start, -1):
            if parser.spent:
                return best[1] if best else None
            if best is not None and end - start <= best[0]:
                break
            code = "\n".join(lines[start:end])
            if parser.parse(code) is not None:
                size = sum(1 for x in lines[start:end] if x.strip())
                if best is None or size > best[0]:
                    best = (size, code)
                break
    return best[1] if best else None


def _prompt_imports(prompt: str, parser: _Parser) -> str:
    """The import lines of the prompt a completion goes on from (HumanEval's `from typing import List`)."""
    if not prompt:
        return ""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(prompt)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""
    lines = prompt.split("\n")
    kept = [
        "\n".join(lines[node.lineno - 1 : node.end_lineno])
        for node in tree.body
        if isinstance(node, (ast.Import, ast.ImportFrom))
    ]
    return "\n".join(kept) + "\n\n" if kept else ""


def _names_used(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _defined(node: ast.stmt) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [node.name]
    if isinstance(node, ast.Assign):
        return [t.id for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return [node.target.id]
    return []


def _closure(code: str, tree: ast.Module, entry_point: str, also: set[str]) -> str:
    """The imports and what `entry_point` (and the names `also`) need, in the order of `code`;
    `code` itself when it does not define `entry_point`."""
    by_name: dict[str, list[ast.stmt]] = {}
    for node in tree.body:
        for name in _defined(node):
            by_name.setdefault(name, []).append(node)
    if entry_point not in by_name:
        return code
    wanted = {entry_point} | (also & by_name.keys())
    queue = list(wanted)
    while queue:
        for node in by_name.get(queue.pop(), []):
            for name in _names_used(node) & by_name.keys():
                if name not in wanted:
                    wanted.add(name)
                    queue.append(name)
    kept_ids = {id(n) for name in wanted for n in by_name.get(name, [])}
    lines = code.split("\n")
    parts = []
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)) or id(node) in kept_ids:
            first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
            parts.append("\n".join(lines[first - 1 : node.end_lineno]))
    return "\n".join(parts) + "\n"


def extract_code(text: str, entry_point: str | None = None, *, prompt: str = "") -> Extracted:
    """The code of a model's answer `text` (the module's documentation says how it is found).

    `prompt`: the text the answer goes on from (HumanEval's signature and docstring): when the
    prompt and the answer together are Python, that is the code (a plain completion); otherwise
    the answer's own code is taken, with the prompt's imports before it."""
    if len(text) + len(prompt) > MAX_CHARS:
        return Extracted(None, "none", f"the completion is over {MAX_CHARS} characters")
    parser = _Parser()
    answer = drop_reasoning(text)
    prompt = prompt.replace("\r\n", "\n")
    tree: ast.Module | None = None
    code: str | None = None
    source: Source = "none"
    if prompt:
        tree = parser.parse(prompt + answer)
        if tree is not None:
            code, source = prompt + answer, "whole"
    if code is None:
        lines = answer.split("\n")
        fenced = [c for _end, c in _blocks(lines, parser, prompt) if c is not None]
        if fenced:
            code, source = fenced[-1], "fence"
        elif (tree := parser.parse(answer)) is not None:
            code, source = answer, "whole"
        else:
            code = _longest_run(lines, parser)
            source = "lines" if code is not None else "none"
        if code is not None and prompt and not code.startswith(prompt):
            code = _prompt_imports(prompt, parser) + code
    if code is None:
        why = "the parse budget ran out" if parser.spent else "no fenced block parses and the text is not Python"
        return Extracted(None, "none", f"the completion has no Python code ({why})")
    if entry_point:
        tree = _parse_final(code)
        if tree is not None:
            given = _parse_final(prompt) if prompt else None  # what the prompt defines stays (a test may use it)
            also = {n for node in given.body for n in _defined(node)} if given is not None else set()
            code = _closure(code, tree, entry_point, also)
    return Extracted(code, source, _SAID[source])


_SAID: dict[Source, str] = {
    "fence": "the code of the last fenced Python block that parses",
    "whole": "the whole text (it is Python)",
    "lines": "the longest run of lines that parses",
    "none": "no code",
}


def _parse_final(code: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def sanitize(text: str, entry_point: str | None = None, *, prompt: str = "") -> str | None:
    """`extract_code(...).code`: the code, or None when the text has none."""
    return extract_code(text, entry_point, prompt=prompt).code
