"""`verifier.extract`: the code of a model's chat answer (property tests: any program, any prose
around it, any fence; and what is not code stays not code)."""

from __future__ import annotations

import ast
import keyword

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier.extract import MAX_CHARS, drop_reasoning, extract_code, sanitize

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

names = st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True).filter(lambda n: not keyword.iskeyword(n))
#: Strings that hold fence lines and backticks: a fence inside a string must not end a block.
tricky_strings = st.sampled_from(
    ["", 's = "```"\n    ', "s = '''\n```\n'''\n    ", 's = """\n~~~\n````python\n"""\n    ', "s = '`' * 3\n    "]
)


@st.composite
def programs(draw: st.DrawFn) -> str:
    """A module of 1-4 functions, each maybe calling the one before it, with fence-like strings."""
    fnames = draw(st.lists(names, min_size=1, max_size=4, unique=True))
    parts = []
    for i, name in enumerate(fnames):
        if i and draw(st.booleans()):
            body = f"return {fnames[i - 1]}(x) + {draw(st.integers(0, 99))}"
        else:
            body = f"return x * {draw(st.integers(0, 99))}"
        parts.append(f"def {name}(x):\n    {draw(tricky_strings)}{body}\n")
    return "\n\n".join(parts)


words = st.from_regex(r"[A-Za-z]{1,8}", fullmatch=True)
sentences = st.builds(
    lambda ws, end: " ".join(ws) + end, st.lists(words, min_size=1, max_size=8), st.sampled_from(".!?:")
)
#: Chat prose: sentences, some with inline `code` in backticks, on one or more lines.
prose = st.lists(
    st.one_of(sentences, st.builds(lambda s, w: f"Use `{w}` here: {s}", sentences, words)), min_size=1, max_size=4
).map("\n".join)
tags = st.sampled_from(["python", "py", "python3", "", "Python", "python title=solution.py"])


def same_code(found: str | None, expected: str) -> bool:
    return found is not None and ast.dump(ast.parse(found)) == ast.dump(ast.parse(expected))


def fenced(code: str, tag: str, fence: str = "```") -> str:
    return f"{fence}{tag}\n{code}\n{fence}"


@SETTINGS
@given(programs(), prose, prose, tags, st.sampled_from(["```", "````", "~~~"]))
def test_a_fenced_program_in_prose_is_found_whole(code: str, before: str, after: str, tag: str, fence: str) -> None:
    text = f"{before}\n\n{fenced(code, tag, fence)}\n\n{after}\n"
    found = extract_code(text)
    assert found.source == "fence"
    assert same_code(found.code, code)


@SETTINGS
@given(st.lists(programs(), min_size=2, max_size=4), prose, st.booleans())
def test_the_last_block_that_parses_is_taken(codes: list[str], between: str, broken_last: bool) -> None:
    blocks = [fenced(code, "python") for code in codes]
    if broken_last:  # a block cut short (the model stopped): the one before it is the answer
        blocks.append("```python\ndef broken(:\n```")
    text = f"\n{between}\n".join(blocks)
    assert same_code(sanitize(text), codes[-1])


@SETTINGS
@given(programs(), prose, prose)
def test_crlf_line_ends_give_the_same_code(code: str, before: str, after: str) -> None:
    text = f"{before}\n```python\n{code}\n```\n{after}"
    assert sanitize(text.replace("\n", "\r\n")) == sanitize(text)


@SETTINGS
@given(programs(), prose)
def test_bare_code_is_the_whole_text_and_trailing_prose_is_left_out(code: str, after: str) -> None:
    assert same_code(sanitize(code), code)
    found = extract_code(f"{code}\n\n{after}\n")
    assert found.source == "lines"
    assert same_code(found.code, code)


@SETTINGS
@given(prose)
def test_prose_without_code_has_none(text: str) -> None:
    found = extract_code(text)
    assert found.code is None
    assert "no Python code" in found.reason


@SETTINGS
@given(prose, st.sampled_from(["bash", "text", "json", "console"]))
def test_a_block_of_another_language_is_not_code(text: str, tag: str) -> None:
    assert sanitize(f"{text}\n```{tag}\npip install numpy\n```\n") is None


@SETTINGS
@given(programs(), programs(), prose)
def test_reasoning_is_dropped(thought: str, code: str, words_: str) -> None:
    text = f"<think>\n{words_}\n{fenced(thought, 'python')}\n</think>\n{words_}\n{fenced(code, 'python')}"
    assert same_code(sanitize(text), code)
    # opened by the chat template in the prompt: only the closing tag is in the answer
    assert same_code(sanitize(f"{words_}\n{fenced(thought, '')}\n</think>\n{fenced(code, 'py')}"), code)
    # never closed: the answer never came
    assert sanitize(f"{fenced(thought, 'python')}\n<think>\n{fenced(code, 'python')}") is not None
    assert drop_reasoning(f"<think>{fenced(code, 'python')}") == ""


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_any_text_gives_code_that_parses_or_none(text: str) -> None:
    found = extract_code(text)
    assert (found.code is None) == (found.source == "none")
    if found.code is not None:
        ast.parse(found.code)


@SETTINGS
@given(programs(), st.sampled_from(["print(main(3))", 'if __name__ == "__main__":\n    main(input())', "main(1)"]))
def test_the_entry_point_keeps_what_it_needs_and_drops_top_level_runs(code: str, run: str) -> None:
    text = (
        "import math\nLIMIT = 10\nunused = 5\n\ndef helper(x):\n    return x + LIMIT\n\n\n"
        f"@staticmethod\ndef main(x):\n    return helper(x)\n\n{code}\n{run}\n"
    )
    kept = sanitize(f"Here:\n```python\n{text}\n```\nIt prints the answer.", "main")
    assert kept is not None
    tree = ast.parse(kept)
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert {"main", "helper"} <= defined
    assert "unused" not in kept and "print(" not in kept and "__main__" not in kept
    assert "import math" in kept and "LIMIT = 10" in kept and "@staticmethod" in kept


def test_an_entry_point_the_code_does_not_define_keeps_the_code() -> None:
    assert sanitize("def other():\n    return 1\n", "main") == "def other():\n    return 1\n"


def test_a_completion_goes_on_from_its_prompt_or_stands_on_its_own() -> None:
    prompt = 'from typing import List\n\n\ndef add(xs: List[int]) -> int:\n    """Sum."""\n'
    plain = extract_code("    return sum(xs)\n", "add", prompt=prompt)
    assert plain.source == "whole" and plain.code is not None and plain.code.startswith("from typing import List")
    chat = extract_code(
        "Sure!\n```python\ndef add(xs: List[int]) -> int:\n    return sum(xs)\n```\n", "add", prompt=prompt
    )
    assert chat.source == "fence" and chat.code is not None
    namespace: dict[str, object] = {}
    exec(compile(chat.code, "<test>", "exec"), namespace)  # the prompt's import came with it
    assert namespace["add"]([1, 2]) == 3  # type: ignore[operator]
    body = extract_code("```python\n    return sum(xs)\n```", "add", prompt=prompt)
    assert body.source == "fence" and body.code is not None and "def add" in body.code


def test_large_and_pathological_texts_are_bounded() -> None:
    assert extract_code("x" * (MAX_CHARS + 1)).code is None
    many_lines = "\n".join(["def f(:"] * 5000)  # every line a start, none parses: the budget ends it
    assert extract_code(many_lines).code is None
    deep = "```python\n" + "(" * 10000 + "\n```"
    assert extract_code(deep).code is None
