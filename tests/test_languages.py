"""The language of a program (issue 36): names and aliases, extensions, Java's class rule, and how
the suite, the candidate's extension and --language must agree (`verify.program_language`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifier.errors import InvalidInput
from verifier.evidence import Fault, Status
from verifier.inputs import Candidate
from verifier.runner import languages
from verifier.runner.protocol import CaseRecord, CompileRecord, FailureRecord, JobCounts, JobResult, format_result_line
from verifier.sandbox.backend import LanguageImage, RawRun, SandboxJob
from verifier.sandbox.fake import FakeBackend, raw_run
from verifier.sandbox.runtime import KERNEL_OF
from verifier.suite import load_suite
from verifier.verify import Verifier, program_language


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


class _LanguageFake(FakeBackend):
    """A fake sandbox with a made-up language image (the real one: test_languages_docker.py)."""

    def language_image(self, language: str, image: str) -> LanguageImage:
        return LanguageImage(language, "fake-lang", "sha256:fake-lang", (f"{language}-toolchain=1",))


def _not_compiled(job: SandboxJob) -> RawRun:
    header = json.loads(job.stdin.split(b"\n", 1)[0])
    program = header["config"]["program"]
    record = CompileRecord(
        language=program["language"],
        ok=False,
        summary="the program did not compile: the compiler exited with code 1",
        exit_code=1,
    )
    failure = FailureRecord(
        test_id="<compile>",
        kind="compile_error",
        summary=record.summary,
        detail_untrusted="main.cpp:1: error: expected ';'",
    )
    case = CaseRecord(name="1", outcome="compile_error", summary="not run: " + record.summary, ran=False)
    result = JobResult(
        runner="pytest", exit_code=1, counts=JobCounts(expected=1, failed=1), failures=[failure], failures_total=1,
        kind="program", cases=[case], compile=record, kernel=KERNEL_OF[job.limits.runtime],
    )  # fmt: skip
    return raw_run(format_result_line(header["nonce"], False, result))


def test_a_compile_error_is_the_candidates_and_names_its_language(tmp_path: Path) -> None:
    suite = program_suite(tmp_path)
    backend = _LanguageFake(_not_compiled)
    with Verifier(backend=backend, image="fake") as v:
        ev = v.check(Candidate.from_text("int main() { return 0 }"), suite, language="cpp")
        as_c = v.check(Candidate.from_text("int main() { return 0 }"), suite, language="c")
    assert ev.status is Status.COMPILE_ERROR and ev.fault is Fault.CANDIDATE and not ev.ok
    assert ev.reason == "the program did not compile" and ev.failures[0].detail_untrusted.startswith("main.cpp:1")
    assert ev.program is not None and ev.program.language == "cpp" and ev.program.toolchain == ["cpp-toolchain=1"]
    assert ev.program.compile is not None and ev.program.compile.exit_code == 1 and not ev.cases[0].ran
    job = json.loads(backend.jobs[0].stdin.split(b"\n", 1)[0])
    assert backend.jobs[0].image == "fake-lang" and job["config"]["program"]["language"] == "cpp"
    assert job["config"]["program"]["compile_memory_bytes"] == 384 * 1024**2  # the sandbox's 512 MiB but 128
    assert as_c.program is not None and as_c.program.language == "c" and as_c.evidence_id != ev.evidence_id


def test_a_backend_without_language_images_says_so(tmp_path: Path) -> None:
    with Verifier(backend=FakeBackend(_not_compiled), image="fake") as v:
        ev = v.check(Candidate.from_text("int main() {}"), program_suite(tmp_path), language="cpp")
    assert ev.status is Status.INFRA_ERROR and "cpp" in ev.reason
    assert ev.program is not None and ev.program.language == "cpp" and ev.program.toolchain == []
