"""The language of a program (issue 36): names and aliases, extensions, Java's class rule, and how
the suite, the candidate's extension and --language must agree (`verify.program_language`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.errors import InvalidInput
from verifier.inputs import Candidate
from verifier.runner import languages
from verifier.suite import load_suite
from verifier.verify import program_language


def program_suite(tmp_path: Path, extra: str = "") -> Path:
    (tmp_path / "cases").mkdir(parents=True)
    (tmp_path / "cases" / "1.in").write_text("1\n")
    (tmp_path / "cases" / "1.out").write_text("1\n")
    (tmp_path / "suite.toml").write_text(f'kind = "program"\n[program]\n{extra}')
    return tmp_path


def test_names_aliases_and_extensions() -> None:
    assert languages.canonical("javascript") == languages.canonical("NodeJS") == "nodejs"
    assert languages.canonical("python3") == "python" and languages.canonical("cobol") is None
    assert [languages.by_extension(f"x{e}") for e in (".c", ".cc", ".java", ".js", ".go", ".rs", ".sh", ".py")] == [
        "c", "cpp", "java", "nodejs", "go", "rust", "bash", "python",
    ]  # fmt: skip
    assert languages.by_extension("notes.txt") is None
    assert set(languages.NAMES) == {"python", "c", "cpp", "java", "nodejs", "go", "rust", "bash"}


def test_java_runs_its_public_class_else_main() -> None:
    assert languages.java_main_class(b"class A {}\npublic final class Solver { }\n") == "Solver"
    assert languages.java_main_class(b"class Main { public static void main(String[] a) {} }") == "Main"
    assert languages.source_name("java", b"public class Q {}") == "Q.java"
    assert languages.source_name("cpp", b"int main(){}") == "main.cpp"


def test_suite_extension_and_option_must_agree(tmp_path: Path) -> None:
    cpp_suite = load_suite(program_suite(tmp_path / "cpp", 'language = "c++"\n'))
    plain = load_suite(program_suite(tmp_path / "plain"))
    assert cpp_suite.program is not None and cpp_suite.program.language == "cpp"
    source = Candidate.from_text("int main() {}")
    assert program_language(source, cpp_suite) == "cpp"
    assert program_language(source, plain) == "python"
    assert program_language(source, plain, "javascript") == "nodejs"
    assert program_language(Candidate.from_bytes(b"x", label="sol.rs"), plain) == "rust"
    with pytest.raises(InvalidInput, match=r"the suite says cpp, the candidate's extension \(\.java\) says java"):
        program_language(Candidate.from_bytes(b"x", label="Main.java"), cpp_suite)
    with pytest.raises(InvalidInput, match="says cpp, --language says go"):
        program_language(source, cpp_suite, "go")
    with pytest.raises(InvalidInput, match="unknown language 'cobol'"):
        program_language(source, plain, "cobol")
    with pytest.raises(InvalidInput, match="one file, not a folder"):
        program_language(Candidate.from_files({"solution.py": "x = 1\n"}), cpp_suite)


def test_an_unknown_language_in_a_suite_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="unknown language 'cobol'"):
        load_suite(program_suite(tmp_path, 'language = "cobol"\n'))
