"""What both sides agree on before any job: the protocol's version, user ids and paths in the
container, the lines' markers, a suite's vocabularies and defaults, the text limits, and the
command that starts the runner."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final, Literal, get_args

PROTOCOL_VERSION = 4

#: The trusted side (tests, result reporting). Never root.
TRUSTED_UID = 2000
#: Candidate processes. Cannot signal, trace or reconfigure the trusted side or the zygote.
CANDIDATE_UID = 2001
#: The zygote: forks candidate processes and resets the candidate side. It keeps only
#: CAP_SETUID/CAP_SETGID (to become CANDIDATE_UID in its children) and runs no candidate
#: code; its own uid keeps it out of the candidates' reach (kill, prlimit, setpriority).
ZYGOTE_UID = 2002

TRUSTED_DIR = "/run/trusted"
SUITE_DIR = f"{TRUSTED_DIR}/suite"
SCRATCH_DIR = "/tmp"
CANDIDATE_DIR = f"{SCRATCH_DIR}/candidate"
#: Every place the candidate's uid can write (tmpfs mounts); wiped between tests and jobs.
CANDIDATE_WRITABLE = (SCRATCH_DIR, "/dev/shm", "/dev/mqueue")
#: Top-level modules the sandbox image can import beyond `sys.stdlib_module_names`: a candidate
#: module may not take one of these names (trees.py). The wheels of
#: sandbox_images/python/requirements.txt (each with every top-level name it installs), the
#: runner, and what each base's interpreter brings (Debian's python3; python:3.11-slim's pip,
#: setuptools and wheel). tests/adversarial/test_candidate_trees.py checks it against the built image.
IMAGE_MODULES = frozenset(
    {
        "pytest", "_pytest", "py",  # pytest
        "pluggy", "iniconfig", "packaging", "pygments",
        "hypothesis", "_hypothesis_pytestplugin", "_hypothesis_ftz_detector", "_hypothesis_globals",
        "sortedcontainers",
        "verifier_runner",
        # Debian's python3 (the debootstrapped base): its site hook and CPython's test modules
        "sitecustomize", "_distutils_system_mod", "test", "__hello__", "__phello__", "_ctypes_test",
        "_testbuffer", "_testcapi", "_testclinic", "_testimportmultiple", "_testinternalcapi",
        "_testmultiphase", "_xxsubinterpreters", "_xxtestfuzz", "xxlimited", "xxlimited_35",
        # python:3.11-slim (the registry base)
        "pip", "setuptools", "pkg_resources", "_distutils_hack", "wheel",
    }
)  # fmt: skip

READY = b"VERIFIER-READY"
RESULT_PREFIX = b"VERIFIER-RESULT "
PROGRESS_PREFIX = b"VERIFIER-PROGRESS "
#: Least time between two progress lines of one job (the last one, done == total, always goes).
PROGRESS_INTERVAL_S = 0.2
BASE_ENV = {
    "PATH": "/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "TZ": "UTC",
    "PYTHONHASHSEED": "0",
    # Native math libraries (numpy's OpenBLAS, an environment's) start a thread per CPU of the
    # host at import without these: one each, under the sandbox's process limit, and no thread
    # in a zygote that preloads them (`PRELOADABLE`). Environment images set them too.
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_MAX_THREADS": "1",
}
#: Set by the host in the container's environment when the sandbox's kernel is gVisor (its value
#: "gvisor"); the launcher reads it before the split (see seccomp.gvisor_guard).
KERNEL_ENV = "VERIFIER_SANDBOX_KERNEL"
#: The kernels a runner can observe under it (`JobResult.kernel`): the host's own Linux kernel
#: (runc) or gVisor's user-space kernel.
KERNELS = ("linux", "gvisor")


# A suite's shape: the one home of its values and its defaults (a suite.toml that says nothing
# gets these). suite.Manifest, Evidence and JobConfig all use them.
Runner = Literal["pytest", "direct"]
RUNNERS: tuple[Runner, ...] = get_args(Runner)
DEFAULT_RUNNER: Final = "pytest"
#: "per-test": every test gets a fresh candidate process on a wiped scratch space (default);
#: "per-run": one candidate process serves all tests of a run (faster; it can keep state).
CandidateProcess = Literal["per-test", "per-run"]
CANDIDATE_PROCESS: tuple[CandidateProcess, ...] = get_args(CandidateProcess)
DEFAULT_CANDIDATE_PROCESS: Final = "per-test"
#: "per-job": the tests run in a fork of the trusted server; "shared": in the server itself
#: (direct suites that opt in; see pristine.py).
TrustedProcess = Literal["per-job", "shared"]
TRUSTED_PROCESS: tuple[TrustedProcess, ...] = get_args(TrustedProcess)
DEFAULT_TRUSTED_PROCESS: Final = "per-job"

#: Why a test failed. The host's `FailureKind` is this list (a test checks they agree).
FAILURE_KINDS = (
    "assertion",
    "exception",
    "candidate_died",
    "timeout",
    "oom",
    "output_limit",
    "not_plain_data",
    "import_error",
    "collection_error",
    "skipped",
    "syntax_error",
    "overloaded",
    "infra",
    # programs (kind "program"): a case whose output was wrong, or whose program failed
    "wrong_answer",
    "runtime_error",
    # a program in a compiled language that did not compile (the candidate's; languages.py)
    "compile_error",
)

#: What a suite is: pytest/direct tests calling functions ("tests"), or cases of input and
#: expected output for a whole program on stdin/stdout ("program").
SuiteKind = Literal["tests", "program"]
KINDS: tuple[SuiteKind, ...] = get_args(SuiteKind)
DEFAULT_KIND: Final = "tests"
#: How a program's output is compared with a case's expected output (see cases.py); "none"
#: compares nothing: a case passes when the program exits 0 within its limits, and what it wrote
#: to stdout and stderr comes back (the run of a service such as SandboxFusion's /run_code).
COMPARE_MODES = ("exact", "tokens", "float", "checker", "none")
#: One program case's outcome: passed, or why not (a subset of FAILURE_KINDS).
CASE_OUTCOMES = (
    "passed",
    "wrong_answer",
    "runtime_error",
    "timeout",
    "oom",
    "output_limit",
    "overloaded",
    "infra",
    "compile_error",
)

MAX_FAILURES = 50
#: Most cases in one program suite (each comes back as a record in the result).
MAX_CASES = 1000
#: Longest line of a first difference shown in a case record.
MAX_LINE = 200
MAX_SUMMARY = 300
MAX_TEST_ID = 500
MAX_DETAIL = 4000
MAX_EXAMPLE = 1000
#: compare = "none": most files a program suite may name to fetch after its last case
#: (`ProgramConfig.fetch_files`), and the longest such path in characters.
MAX_FETCH_FILES = 32
MAX_FETCH_PATH = 255


#: Past this many times its limit in wall-clock time, a run or call that was waiting for a CPU
#: (not running, not sleeping) ends as `overloaded` instead of running on.
OVERLOAD_FACTOR = 4.0


_LAUNCH = ("python3", "-I", "-B", "-m", "verifier_runner.launch")


#: What a runner serving pytest suites imports once, before its first job (comma-separated).
#: Suites of the direct runner and programs need nothing: their pools preload "".
PYTEST_PRELOAD = "pytest,hypothesis"


#: An environment's packages that both sides of a runner import once, before the first job,
#: when the environment image has them and the suite is a test suite (`data_preload`): the
#: zygote imports them before it forks any candidate process, the trusted server before it forks
#: any trusted child. Only packages checked to start no thread and to hold no state a candidate
#: process could hand to the next (each candidate process is a fresh fork of a zygote that never
#: runs candidate code; numpy's global random state is reseeded in each, as a fresh import
#: would seed it): tests/runner/test_data_preload.py, tests/adversarial/test_data_preload.py.
PRELOADABLE: tuple[str, ...] = ("numpy", "pandas")


def data_preload(modules: Iterable[str], kind: str) -> str:
    """What a job on an environment whose packages define `modules` preloads (comma-separated,
    in `PRELOADABLE`'s order): the preloadable ones, for a test suite; nothing for a program,
    whose cases are judged on their process's peak memory (inherited pages would count)."""
    have = set(modules)
    return ",".join(m for m in PRELOADABLE if m in have) if kind == "tests" else ""


def launch_command(max_jobs: int, preload: str = PYTEST_PRELOAD, data: str = "") -> list[str]:
    """The command that starts the runner as a server of up to `max_jobs` jobs; `data`: the
    environment's packages both sides import first (`data_preload`)."""
    command = [*_LAUNCH, "--max-jobs", str(max_jobs), "--preload", preload or ","]
    return [*command, "--data", data] if data else command


def launch_data(command: Sequence[str]) -> str:
    """The `data` a launch command was made with ("" when none)."""
    args = list(command)
    return args[args.index("--data") + 1] if "--data" in args[:-1] else ""


def is_launch_command(command: object) -> bool:
    """Whether `command` starts the runner (any server of its jobs can serve such a job)."""
    return isinstance(command, (list, tuple)) and tuple(command[: len(_LAUNCH)]) == _LAUNCH
