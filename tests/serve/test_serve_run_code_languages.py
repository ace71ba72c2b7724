"""`/run_code` in other languages (issue 36) through a real server on 127.0.0.1 on the real engine
and the language image: SandboxFusion's answers for C++, Java, JavaScript and Bash programs that
pass, fail to compile, crash and run out of time (`compile_result` with its status, return code
and the compiler's stderr; no `run_result` after a compile error), `compile_timeout` honoured,
and what is refused (a language this server does not run, `files` with a one-file language)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import docker
import httpx
import pytest

from tests.conftest import SETTLE_ATTEMPTS
from tests.serve.server import Served, make_token, start
from tests.serve.test_serve_run_code import verl_reads

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.xdist_group("languages")]

CPP_SUM = "#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a + b << std::endl; }\n"
JAVA_SUM = (
    "import java.util.Scanner;\npublic class Main {\n  public static void main(String[] args) {\n"
    "    Scanner in = new Scanner(System.in);\n    System.out.println(in.nextLong() + in.nextLong());\n  }\n}\n"
)
JS_SUM = (
    "const s = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconsole.log(s[0] + s[1]);\n"
)
#: Compiles in well over 0.1 s of CPU (the whole of libstdc++'s headers), in a few seconds at most.
CPP_HEAVY = "#include <bits/stdc++.h>\nint main() { std::vector<int> v{3, 1, 2}; std::sort(v.begin(), v.end()); }\n"


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, sandbox_image: str, docker_client: docker.DockerClient
) -> Iterator[Served]:
    from verifier.sandbox.image import language_image

    language_image(docker_client, "cpp")  # built once (minutes), before a request waits on it
    folder = tmp_path_factory.mktemp("serve-run-code-languages")
    everything = {"run_code": True, "suites": ["*"], "concurrency": 16, "rate_per_s": 1000.0, "burst": 1000}
    tokens = {"verl": (make_token(), everything)}
    config = "[run_code]\nmax_memory_mb = 256\nmax_run_timeout_s = 10\nmax_compile_timeout_s = 60\npool_size = 2\n"
    env = {"VERIFIER_SLOTS_DIR": str(folder / "slots"), "VERIFIER_MAX_SANDBOXES": "2"}
    server = start(folder, config, tokens, env=env)
    try:
        yield server
    finally:
        server.stop()


def run_code(served: Served, body: dict[str, Any]) -> httpx.Response:
    """A request as verl sends it (its fields, the token in the URL), sent again after a 504."""
    payload = {"compile_timeout": 30, "run_timeout": 5, "memory_limit_MB": 256, "files": {}, "fetch_files": [], **body}
    with httpx.Client(base_url=served.url, timeout=600) as client:
        for _ in range(SETTLE_ATTEMPTS):
            answer = client.post(f"/t/{served.tokens['verl']}/run_code", json=payload)
            if answer.status_code != 504:
                break
    return answer


def answer_of(served: Served, body: dict[str, Any]) -> dict[str, Any]:
    response = run_code(served, body)
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def compiled_ok(answer: dict[str, Any]) -> None:
    compiled = answer["compile_result"]
    assert compiled is not None, answer
    assert compiled["status"] == "Finished" and compiled["return_code"] == 0, compiled
    assert compiled["execution_time"] > 0


@pytest.mark.parametrize(("language", "code"), [("cpp", CPP_SUM), ("java", JAVA_SUM)])
def test_a_compiled_program_runs_as_sandboxfusion_answers(served: Served, language: str, code: str) -> None:
    ok = answer_of(served, {"code": code, "stdin": "20 22\n", "language": language})
    assert ok["status"] == "Success", ok
    compiled_ok(ok)
    run = ok["run_result"]
    assert run["status"] == "Finished" and run["return_code"] == 0 and run["stdout"] == "42\n", run
    assert verl_reads(ok, "42") is True and verl_reads(ok, "43") is False


def test_a_compile_error_has_the_compilers_message_and_no_run(served: Served) -> None:
    for language, code, words in (
        ("cpp", "int main( { return 0; }\n", "error"),
        ("java", "public class Main { public static void main(String[] a) { int x = ; } }\n", "error"),
    ):
        answer = answer_of(served, {"code": code, "stdin": "", "language": language})
        assert answer["status"] == "Failed", answer
        compiled = answer["compile_result"]
        assert compiled["status"] == "Finished" and compiled["return_code"] not in (0, None), compiled
        assert words in compiled["stderr"] and compiled["stdout"] == ""
        assert answer["run_result"] is None  # SandboxFusion's run_commands: no run after a failed compile
        assert verl_reads(answer, "") == -4


def test_runtime_errors_and_time_limits(served: Served) -> None:
    crash = answer_of(served, {"code": "int main() { return 3; }\n", "language": "cpp"})
    assert crash["status"] == "Failed" and crash["run_result"]["return_code"] == 3, crash
    compiled_ok(crash)
    assert verl_reads(crash, "") == -2
    abort = answer_of(served, {"code": "#include <cstdlib>\nint main() { std::abort(); }\n", "language": "cpp"})
    assert abort["run_result"]["return_code"] == -6, abort  # SIGABRT, as SandboxFusion's -N
    throws = 'public class Main { public static void main(String[] a) { throw new RuntimeException("boom"); } }\n'
    java = answer_of(served, {"code": throws, "language": "java"})
    assert java["status"] == "Failed" and java["run_result"]["return_code"] == 1, java
    assert "boom" in java["run_result"]["stderr"] and verl_reads(java, "") == -2
    spin = answer_of(
        served, {"code": "int main() { volatile int x = 0; for (;;) x++; }\n", "language": "cpp", "run_timeout": 1}
    )
    assert spin["status"] == "Failed" and spin["run_result"]["status"] == "TimeLimitExceeded", spin
    assert spin["run_result"]["return_code"] is None and verl_reads(spin, "") == -3
    compiled_ok(spin)
    java_spin = "public class Main { public static void main(String[] a) { long x = 0; while (true) x++; } }\n"
    slow = answer_of(served, {"code": java_spin, "language": "java", "run_timeout": 1})
    assert slow["run_result"]["status"] == "TimeLimitExceeded" and verl_reads(slow, "") == -3


@pytest.mark.parametrize("language", ["nodejs", "javascript"])
def test_an_interpreted_language_has_no_compile_result(served: Served, language: str) -> None:
    ok = answer_of(served, {"code": JS_SUM, "stdin": "20 22", "language": language})
    assert ok["status"] == "Success" and ok["compile_result"] is None, ok
    assert ok["run_result"]["stdout"] == "42\n" and verl_reads(ok, "42") is True
    bad = answer_of(served, {"code": "throw new Error('boom');\n", "language": language})
    assert bad["status"] == "Failed" and bad["compile_result"] is None and bad["run_result"]["return_code"] == 1, bad
    assert "boom" in bad["run_result"]["stderr"] and verl_reads(bad, "") == -2
    spin = answer_of(served, {"code": "for (;;) {}\n", "language": language, "run_timeout": 1})
    assert spin["run_result"]["status"] == "TimeLimitExceeded" and verl_reads(spin, "") == -3


def test_bash_runs_its_script(served: Served) -> None:
    ok = answer_of(served, {"code": "read a b\necho $((a + b))\n", "stdin": "20 22\n", "language": "bash"})
    assert ok["status"] == "Success" and ok["compile_result"] is None and ok["run_result"]["stdout"] == "42\n", ok
    failed = answer_of(served, {"code": "echo oops >&2\nexit 4\n", "language": "bash"})
    assert failed["run_result"]["return_code"] == 4 and failed["run_result"]["stderr"] == "oops\n", failed


def test_compile_timeout_is_honoured(served: Served) -> None:
    """The same program compiles with 30 s and is TimeLimitExceeded (compile_result) with 0.1 s."""
    given = answer_of(served, {"code": CPP_HEAVY, "language": "cpp", "compile_timeout": 30})
    assert given["status"] == "Success", given
    compiled_ok(given)
    short = answer_of(served, {"code": CPP_HEAVY, "language": "cpp", "compile_timeout": 0.1})
    assert short["status"] == "Failed", short
    assert short["compile_result"]["status"] == "TimeLimitExceeded" and short["compile_result"]["return_code"] is None
    assert short["run_result"] is None and verl_reads(short, "") == -4


def test_what_is_refused(served: Served) -> None:
    for body, words in (
        ({"code": "<?php echo 1;", "language": "php"}, "cpp"),  # SandboxFusion runs php; this server does not
        ({"code": "print(1)", "language": "cobol"}, "java"),
        ({"code": CPP_SUM, "language": "cpp", "files": {"data.txt": "eA=="}}, "one file"),
        ({"code": CPP_SUM, "language": "cpp", "compile_timeout": 0}, "compile_timeout"),
    ):
        refused = run_code(served, body)
        assert refused.status_code == 400, (body, refused.text)
        assert words in refused.text, (body, refused.text)
