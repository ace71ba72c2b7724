"""A suite: a folder of ordinary pytest files that `import solution`, plus an optional
`suite.toml` manifest. Loaded once into memory; the host's files are only ever read.

The manifest is a pydantic model (`Manifest`, unknown keys refused), validated once when the
suite loads, with errors that name the file, the key and what is allowed.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from verifier.errors import InvalidInput
from verifier.hashing import left_out, tree_sha256
from verifier.limits import DEFAULT_MEMORY_BYTES, Limits, MiB
from verifier.runner.cases import CaseError, check_checker_source, load_cases
from verifier.runner.languages import NAMES as LANGUAGE_NAMES
from verifier.runner.languages import canonical as canonical_language
from verifier.runner.protocol import (
    DEFAULT_CANDIDATE_PROCESS,
    DEFAULT_KIND,
    DEFAULT_RUNNER,
    DEFAULT_TRUSTED_PROCESS,
    MAX_FETCH_FILES,
    MAX_FETCH_PATH,
    CandidateProcess,
    ProgramConfig,
    Runner,
    SuiteKind,
    TrustedProcess,
)
from verifier.runner.suite_files import is_test_file
from verifier.runner.trees import path_problem, reserved, shown, tree_problem
from verifier.sandbox.requirements import DependencyError, DependencySpec, check_requirement, parse_lines

MAX_SUITE_BYTES = 8 * 1024**2
MANIFEST = "suite.toml"
#: A suite folder's requirements file (instead of `requirements` in suite.toml, never both).
REQUIREMENTS_FILE = "requirements.txt"


class HypothesisManifest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    max_examples: int = Field(100, ge=1, le=100_000, description="Examples per property test.")


#: Memory a program suite leaves for the trusted side and the warm interpreters: a case's
#: `memory_bytes` may be at most the sandbox's memory limit minus this.
PROGRAM_MEMORY_RESERVE = 128 * MiB


class ProgramManifest(BaseModel):
    """`suite.toml`'s `[program]` table, for `kind = "program"` (see verifier/runner/cases.py)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    cases: str = Field(
        "cases",
        description="A folder of NAME.in + NAME.out files in the suite, or a .jsonl file of "
        '{"name"?, "input", "output"} lines.',
    )
    compare: Literal["exact", "tokens", "float", "checker", "none"] = Field(
        "tokens",
        description="exact (bytes; \\r\\n and one final newline forgiven), tokens (whitespace-separated), "
        "float (tokens, numbers within abs_tol or rel_tol), checker (a special judge: `checker`'s "
        "check(input, output, expected), run on the trusted side), or none (nothing is compared: a case "
        "passes when the program exits 0 within its limits, and its stdout and stderr come back in the "
        "evidence; a run, as a service's /run_code answers it).",
    )
    abs_tol: float = Field(1e-6, ge=0, allow_inf_nan=False, description="compare = float: absolute tolerance.")
    rel_tol: float = Field(1e-6, ge=0, allow_inf_nan=False, description="compare = float: relative tolerance.")
    checker: str | None = Field(
        None, description="compare = checker: the suite file defining check(input, output, expected) -> bool."
    )
    time_limit_s: float = Field(
        2.0, gt=0, le=600, description="Charged time one case may take, from the fork to the program's exit."
    )
    memory_bytes: int = Field(
        256 * MiB, ge=16 * MiB, description="Peak resident memory one case's program may reach (interpreter included)."
    )

    language: str | None = Field(
        None,
        description="The program's language (SandboxFusion's names: python, c, cpp, java, nodejs (or javascript), "
        "go, rust, bash; docs/programs.md). Unset: from the candidate file's extension, else python.",
    )
    compile_timeout_s: float = Field(
        10.0, gt=0, le=600, description="Compiled languages: charged time the compile step may take."
    )
    compile_memory_bytes: int | None = Field(
        None,
        ge=16 * MiB,
        description="Compiled languages: peak resident memory of any compiler process; unset: all the sandbox's "
        "memory but the trusted side's reserve (the compile step is the only thing running).",
    )

    fetch_files: tuple[str, ...] = Field(
        (),
        max_length=MAX_FETCH_FILES,
        description="compare = none only: files (paths relative to the program's folder, checked as a "
        "candidate folder's paths are) read back after the last case, before the sandbox is reset, and "
        "returned in that case's outcome (base64, with their SHA-256); a missing file, a link, a FIFO or "
        "a file over the result's room says so instead.",
    )

    @model_validator(mode="after")
    def _checker_iff_compare(self) -> ProgramManifest:
        if (self.compare == "checker") != (self.checker is not None):
            raise ValueError("checker: name the checker file exactly when compare = 'checker'")
        if self.fetch_files and self.compare != "none":
            raise ValueError("fetch_files: only with compare = 'none'")
        return self

    @field_validator("fetch_files")
    @classmethod
    def _fetch_paths(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for path in value:
            too_long = f"a path longer than {MAX_FETCH_PATH} characters" if len(path) > MAX_FETCH_PATH else None
            problem = path_problem(path) or too_long
            if problem is not None:
                raise ValueError(f"fetch_files: {problem}")
        if len(set(value)) != len(value):
            raise ValueError("fetch_files: a path named twice")
        return value

    @field_validator("language")
    @classmethod
    def _known_language(cls, value: str | None) -> str | None:
        if value is None:
            return None
        named = canonical_language(value)
        if named is None:
            raise ValueError(f"unknown language {value[:40]!r} (one of {', '.join(LANGUAGE_NAMES)})")
        return named

    def config(self, language: str | None = None, sandbox_memory_bytes: int = DEFAULT_MEMORY_BYTES) -> ProgramConfig:
        """The runner's settings (verifier.runner.protocol.ProgramConfig) for a program in
        `language` (the suite's own, else python when None) in a sandbox of `sandbox_memory_bytes`."""
        settings = self.model_dump()
        settings["language"] = language or self.language or "python"
        if self.compile_memory_bytes is None:
            settings["compile_memory_bytes"] = max(16 * MiB, sandbox_memory_bytes - PROGRAM_MEMORY_RESERVE)
        return ProgramConfig(**settings)


class Manifest(BaseModel):
    """`suite.toml`: every key optional."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str | None = Field(None, description="A name for reports (default: the folder's name).")
    module: str = Field("solution", description="The module name the tests import a single-file candidate as.")
    modules: list[str] | None = Field(
        None,
        description="For candidate folders: modules the tests import, which the folder must have "
        "(every module of the folder is importable either way).",
    )
    runner: Runner = Field(
        DEFAULT_RUNNER, description="pytest, or direct: plain test_* functions called without pytest's start-up cost."
    )
    candidate_process: CandidateProcess = Field(
        DEFAULT_CANDIDATE_PROCESS,
        description="per-test: a fresh candidate process on a wiped scratch space for every test (default); "
        "per-run: one process serves every test of the run (faster, but the candidate can keep state).",
    )
    trusted_process: TrustedProcess = Field(
        DEFAULT_TRUSTED_PROCESS,
        description="per-job: each job's tests run in a fresh fork of the trusted server (default); "
        "shared (direct suites only): in the trusted server itself, which after each job drops the modules "
        "the job imported, restores random's state and checks that nothing else of it changed (or ends the "
        "sandbox); faster, for suites whose tests change no global state (docs/suites.md).",
    )
    limits: dict[str, Any] = Field(
        default_factory=dict,
        description="Any field of Limits. runtime is a floor: it can raise "
        "the caller's runc to gvisor, never lower the caller's gvisor (Limits.overridden).",
    )
    hypothesis: HypothesisManifest = HypothesisManifest()
    kind: SuiteKind = Field(
        DEFAULT_KIND,
        description="tests: test files that call the candidate's functions; program: the candidate is a "
        "whole program, run on the cases of [program] with its stdin fed and its stdout compared.",
    )
    program: ProgramManifest | None = Field(
        None, description='Cases, comparison and per-case limits (kind = "program").'
    )
    requirements: list[str] | None = Field(
        None,
        description="Packages from the index the tests and the candidate use (e.g. ['numpy>=2,<3']), installed "
        "read-only in an environment image built on the sandbox image (wheels only; no URL, path or pip option). "
        "Or a requirements.txt in the suite folder, not both.",
    )

    @model_validator(mode="after")
    def _shared_only_direct(self) -> Manifest:
        if self.trusted_process == "shared" and (self.runner, self.kind) != ("direct", "tests"):
            raise ValueError("trusted_process: 'shared' needs runner = 'direct' (pytest keeps state across runs)")
        return self

    @model_validator(mode="after")
    def _program_iff_kind(self) -> Manifest:
        if self.program is not None and self.kind != "program":
            raise ValueError("program: a [program] table needs kind = 'program'")
        if self.kind == "program" and self.program is None:
            return self.model_copy(update={"program": ProgramManifest()})
        return self

    @field_validator("module")
    @classmethod
    def _identifier(cls, value: str) -> str:
        if not value.isidentifier():
            raise ValueError("must be a Python identifier")
        _not_reserved(value)
        return value

    @field_validator("modules")
    @classmethod
    def _dotted(cls, value: list[str] | None) -> list[str] | None:
        for name in value or []:
            if not all(part.isidentifier() for part in name.split(".")):
                raise ValueError(f"{name!r} is not a module name")
            _not_reserved(name)
        return value

    @field_validator("requirements")
    @classmethod
    def _index_names(cls, value: list[str] | None) -> list[str] | None:
        for number, line in enumerate(value or [], 1):
            try:
                check_requirement(line, f"requirements[{number}]")
            except DependencyError as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("limits")
    @classmethod
    def _known_limits(cls, value: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(value) - set(Limits.model_fields))
        if unknown:
            raise ValueError(f"unknown key {unknown[0]!r}; allowed: {', '.join(Limits.model_fields)}")
        try:  # each value, with Limits' own rules
            Limits.model_validate({**Limits().model_dump(), **value})
        except ValidationError as exc:
            first = exc.errors()[0]
            key = ".".join(str(part) for part in first["loc"])
            raise ValueError(f"{key}: {first['msg']} (got {first.get('input')!r})") from None
        return value


def _not_reserved(name: str) -> None:
    """A candidate's module may not take a name of the sandbox's (verifier.runner.trees)."""
    whose = reserved(name.split(".")[0])
    if whose is not None:
        raise ValueError(f"{name!r} is named like {whose}: the candidate may not replace it")


def _explain(error: ValidationError, where: str) -> str:
    first = error.errors()[0]
    key = ".".join(str(part) for part in first["loc"] if part != "__root__")
    msg = str(first["msg"]).removeprefix("Value error, ")
    if first["loc"] == ("limits",):
        return f"{where}: [limits] {msg}"
    if first["type"] == "extra_forbidden":
        section = first["loc"][0] if len(first["loc"]) > 1 else None
        sections: dict[str, type[BaseModel]] = {"hypothesis": HypothesisManifest, "program": ProgramManifest}
        model = sections.get(str(section), Manifest)
        return f"{where}: unknown key {key!r}; allowed: {', '.join(model.model_fields)}"
    if first["type"] == "literal_error":
        return f"{where}: {key}: {msg}"
    value = first.get("input")
    shown = f" (got {value!r})" if not isinstance(value, dict) else ""
    return f"{where}: {key}: {msg}{shown}"


def parse_manifest(text: bytes, where: str = MANIFEST) -> Manifest:
    """Validate a suite.toml. Raises InvalidInput naming the file, the key and what is allowed."""
    try:
        raw = tomllib.loads(text.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{where} is not valid TOML: {exc}") from exc
    try:
        return Manifest.model_validate(raw)
    except ValidationError as exc:
        raise InvalidInput(_explain(exc, where)) from None


@dataclass(frozen=True)
class Suite:
    """The trusted tests, as bytes, with their manifest."""

    files: dict[str, bytes]
    manifest: Manifest = field(default_factory=Manifest)
    name: str = "suite"

    @property
    def module(self) -> str:
        return self.manifest.module

    @property
    def declared_modules(self) -> list[str]:
        """The candidate's modules the tests may import: `modules`, else `module` (suite.toml).
        A candidate folder's other modules are importable from its own code only."""
        return list(self.manifest.modules or [self.manifest.module])

    @property
    def runner(self) -> Runner:
        return self.manifest.runner

    @property
    def max_examples(self) -> int:
        return self.manifest.hypothesis.max_examples

    @property
    def candidate_process(self) -> CandidateProcess:
        return self.manifest.candidate_process

    @property
    def trusted_process(self) -> TrustedProcess:
        return self.manifest.trusted_process

    @property
    def kind(self) -> SuiteKind:
        return self.manifest.kind

    @property
    def program(self) -> ProgramManifest | None:
        """The [program] settings of a program suite (None for tests)."""
        return self.manifest.program

    @property
    def requirements(self) -> DependencySpec:
        """The packages the suite declares (suite.toml `requirements` or requirements.txt), each
        line checked. Raises DependencyError (an InvalidInput) naming a refused line."""
        return suite_requirements(self.files, self.manifest)

    @property
    def uses_hypothesis(self) -> bool:
        if self.kind == "program":
            return False
        return any(b"hypothesis" in data for path, data in self.files.items() if path.endswith(".py"))

    @property
    def sha256(self) -> str:
        return tree_sha256(self.files)

    @property
    def test_files(self) -> list[str]:
        return [p for p in self.files if is_test_file(p)]

    def limits(self, base: Limits) -> Limits:
        """`base` with this suite's [limits] applied (`Limits.overridden`: the runtime is a floor,
        the stronger one wins), validated as a whole."""
        limits = base.overridden(self.manifest.limits) if self.manifest.limits else base
        program = self.program
        compile_memory = program.compile_memory_bytes if program is not None else None
        if compile_memory is not None and compile_memory > limits.memory_bytes - PROGRAM_MEMORY_RESERVE:
            raise ValueError(
                f"[program] compile_memory_bytes ({compile_memory // MiB} MiB) must leave "
                f"{PROGRAM_MEMORY_RESERVE // MiB} MiB of the sandbox's {limits.memory_bytes // MiB} MiB for the "
                "trusted side: lower it or raise [limits] memory_bytes"
            )
        if program is not None and program.memory_bytes > limits.memory_bytes - PROGRAM_MEMORY_RESERVE:
            raise ValueError(
                f"[program] memory_bytes ({program.memory_bytes // MiB} MiB) must leave "
                f"{PROGRAM_MEMORY_RESERVE // MiB} MiB of the sandbox's {limits.memory_bytes // MiB} MiB for the "
                "trusted side: lower it or raise [limits] memory_bytes"
            )
        return limits


def suite_requirements(files: Mapping[str, bytes], manifest: Manifest) -> DependencySpec:
    """What `files` with `manifest` declare: suite.toml `requirements` or requirements.txt, not both."""
    text = files.get(REQUIREMENTS_FILE)
    if text is not None and manifest.requirements is not None:
        raise DependencyError(f"the suite has both {MANIFEST} requirements and {REQUIREMENTS_FILE}: keep one")
    if text is not None:
        try:
            lines = text.decode("utf-8").splitlines()
        except UnicodeDecodeError:
            raise DependencyError(f"{REQUIREMENTS_FILE} is not UTF-8") from None
        return parse_lines(lines, REQUIREMENTS_FILE)
    if manifest.requirements:
        spec = parse_lines(manifest.requirements, f"{MANIFEST} requirements")
        return DependencySpec(spec.requirements, (f"{MANIFEST} requirements",))
    return DependencySpec()


def check_program(files: dict[str, bytes], manifest: Manifest, where: str) -> None:
    """A program suite's cases and checker are usable. Raises InvalidInput naming what is not."""
    program = manifest.program
    if program is None:
        return
    try:
        load_cases(files, program.cases)
        if program.checker is not None:
            if program.checker not in files:
                raise CaseError(f"the checker file {program.checker} is not in the suite")
            check_checker_source(files[program.checker], program.checker)
    except CaseError as exc:
        raise InvalidInput(f"{where}: {exc}", sha256=tree_sha256(files)) from None


def _read_tree(root: Path) -> tuple[dict[str, bytes], bool]:
    """(files, complete): complete is False when the tree is over MAX_SUITE_BYTES (files then
    holds every file, so the refusal can name the tree's digest)."""
    files: dict[str, bytes] = {}
    total = 0
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root)
        if left_out(rel) or not p.is_file():
            continue
        data = p.read_bytes()
        total += len(data)
        files[rel.as_posix()] = data
    return files, total <= MAX_SUITE_BYTES


def load_suite(path: Path | str) -> Suite:
    """Read a suite folder. Raises InvalidInput with a one-line reason when unusable."""
    root = Path(path)
    if not root.exists():
        raise InvalidInput(f"suite folder {root} does not exist")
    if not root.is_dir():
        raise InvalidInput(f"suite {root} is not a folder")
    files, complete = _read_tree(root)
    if not complete:
        raise InvalidInput(f"suite {root} is larger than {MAX_SUITE_BYTES // 1024**2} MiB", sha256=tree_sha256(files))
    return _validated(files, f"suite {root}", str(root / MANIFEST), root.resolve().name)


def suite_from_files(files: Mapping[str, bytes], name: str = "suite") -> Suite:
    """A suite held in memory (relative POSIX path -> bytes), e.g. sent to a service: its paths
    must be a canonical tree (`verifier.runner.trees`, as a candidate folder's), and it is then
    validated as `load_suite` validates a folder. Raises InvalidInput naming what is refused."""
    where = f"suite {name}"
    problem = tree_problem(list(files))
    if problem is not None:
        raise InvalidInput(f"{where} is refused: it has {problem[0]}", detail_untrusted=shown(problem[1]))
    held = {path: bytes(data) for path, data in files.items()}
    if sum(len(data) for data in held.values()) > MAX_SUITE_BYTES:
        raise InvalidInput(f"{where} is larger than {MAX_SUITE_BYTES // 1024**2} MiB", sha256=tree_sha256(held))
    return _validated(held, where, f"{where}: {MANIFEST}", name)


def _validated(files: dict[str, bytes], where: str, manifest_where: str, default_name: str) -> Suite:
    """The suite of these files, or InvalidInput (naming the tree's digest) when unusable."""
    digest = tree_sha256(files)
    try:
        manifest = parse_manifest(files[MANIFEST], manifest_where) if MANIFEST in files else Manifest()
    except InvalidInput as exc:
        raise InvalidInput(str(exc), sha256=digest) from None
    suite = Suite(files=files, manifest=manifest, name=manifest.name or default_name)
    try:
        suite_requirements(files, manifest)
    except DependencyError as exc:
        raise DependencyError(f"{where}: {exc}", sha256=digest) from None
    if suite.kind == "program":
        check_program(files, manifest, where)
        return suite
    if not any(files[p].strip() for p in suite.test_files):
        raise InvalidInput(f"{where} has no tests (no non-empty test_*.py or *_test.py file)", sha256=digest)
    return suite
