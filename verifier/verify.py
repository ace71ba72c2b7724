"""The Verifier façade: candidate + suite -> Evidence.

The one place where everything that can go wrong becomes fail-closed evidence: bad input
(invalid_input), an unavailable sandbox (infra_error), a machine too busy to run the job
(overloaded), and every run, judged by `verifier.verdict.judge_result`.
"""

from __future__ import annotations

import itertools
import secrets
import socket
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from verifier._distribution import __version__
from verifier.closing import Closing
from verifier.errors import HostOverloaded, InvalidInput, SandboxUnavailable
from verifier.evidence import (
    MAX_UNTRUSTED_CHARS,
    Durations,
    EnvironmentInfo,
    Evidence,
    Failure,
    FailureKind,
    HypothesisSettings,
    ProgramInfo,
    Status,
    truncate,
)
from verifier.hashing import evidence_id
from verifier.inputs import Candidate
from verifier.limits import Limits, PoolConfig, RunPolicy
from verifier.runner import languages, trees
from verifier.runner.protocol import (
    OVERLOAD_FACTOR,
    PYTEST_PRELOAD,
    RESULT_OVERHEAD_BYTES,
    CandidateProcess,
    JobConfig,
    JobResult,
    ProtocolError,
    Runner,
    SuiteKind,
    TrustedProcess,
    data_preload,
    encode_job,
    launch_command,
    parse_progress_line,
)
from verifier.sandbox import runtime
from verifier.sandbox.backend import LanguageImage, SandboxBackend, SandboxJob
from verifier.suite import Suite, load_suite
from verifier.verdict import Verdict, judge_result, read_result

if TYPE_CHECKING:
    from verifier.sandbox.admission import Admission
    from verifier.sandbox.environment import Environment

#: Host-side slack past the in-container backstop, for container start and result reporting.
HOST_GRACE_S = 30.0
#: A reply from the candidate process may be at most this fraction of the sandbox's memory:
#: decoding it must never be what runs the trusted side out of memory.
REPLY_MEMORY_FRACTION = 64
_THIS_NODE = socket.gethostname()

CandidateInput = Path | Candidate | str | bytes
SuiteInput = Path | str | Suite


class Verifier(Closing):
    """Verify candidates against trusted suites in a sandbox.

    Args:
        backend: where jobs run; a `DockerBackend` on the local engine by default.
        image: the sandbox image; the image built for the current recipe by default.
        limits: resource limits (a suite's `suite.toml` may tighten or loosen them).
    """

    def __init__(
        self,
        *,
        backend: SandboxBackend | None = None,
        image: str | None = None,
        limits: Limits | None = None,
    ) -> None:
        self._backend = backend
        self._image = image
        self.limits = limits or Limits()
        #: Environment images found or built so far, by requirement lines (this Verifier's own).
        self._environments: dict[tuple[str, ...], Environment] = {}
        #: Language images found or built so far, by language (this Verifier's own).
        self._languages: dict[str, LanguageImage] = {}

    @classmethod
    def pooled(
        cls,
        pool: PoolConfig | None = None,
        *,
        limits: Limits | None = None,
        image: str | None = None,
        admission: Admission | None = None,
    ) -> Verifier:
        """A Verifier on a warm pool (see verifier.sandbox.pool and `PoolConfig`); close it to
        remove the containers. `admission`: the machine-wide slots its jobs queue for (the
        default `Admission()`; a service passes one with its own wait limit)."""
        from verifier.sandbox.image import image_tag
        from verifier.sandbox.pool import WarmPool

        limits = limits or Limits()
        image = image or image_tag()
        backend = WarmPool(pool, image=image, limits=limits, admission=admission)
        return cls(backend=backend, image=image, limits=limits)

    @classmethod
    def with_policy(
        cls,
        policy: RunPolicy,
        pool: PoolConfig | None = None,
        *,
        limits: Limits | None = None,
        image: str | None = None,
        admission: Admission | None = None,
    ) -> Verifier:
        """The one factory for a run policy: "cold" runs every job in a new container; "fresh"
        and "reuse" a warm pool of that policy (the rest of its settings from `pool`). Every job
        queues for a slot of `admission` (the default `Admission()` when None)."""
        if policy == "cold":
            if admission is None:
                return cls(limits=limits, image=image)
            from verifier.sandbox.docker_engine import DockerBackend

            return cls(backend=DockerBackend(admission=admission), limits=limits, image=image)
        settings = (pool or PoolConfig()).model_copy(update={"policy": policy})
        return cls.pooled(settings, limits=limits, image=image, admission=admission)

    @property
    def backend(self) -> SandboxBackend:
        if self._backend is None:
            from verifier.sandbox.docker_engine import DockerBackend

            self._backend = DockerBackend()
        return self._backend

    @property
    def image(self) -> str:
        if self._image is None:
            from verifier.sandbox.image import image_tag

            self._image = image_tag()
        return self._image

    @property
    def backend_if_made(self) -> SandboxBackend | None:
        """The backend, if one was given or made already (never connects to an engine)."""
        return self._backend

    def close(self) -> None:
        if self._backend is not None:
            self._backend.close()

    def environment(self, suite: Suite) -> Environment | None:
        """The environment image of the suite's `requirements` (None when it declares none),
        found or built once per Verifier (`SandboxBackend.environment`).

        Raises:
            DependencyError: a requirement the index cannot resolve (an InvalidInput naming it).
            SandboxUnavailable: the engine or the build failed.
        """
        spec = suite.requirements
        if not spec.requirements:
            return None
        env = self._environments.get(spec.requirements)
        if env is None:
            env = self._environments[spec.requirements] = self.backend.environment(spec, self.image)
        return env

    def planned_evidence_id(
        self, candidate: CandidateInput, suite: SuiteInput, *, language: str | None = None
    ) -> str | None:
        """The evidence_id `check` would produce, without running; None for unusable input.

        Lets an evidence store serve a result already computed for the same candidate,
        suite, image and limits. A suite with requirements has its environment found (or built).
        """
        try:
            cand = Candidate.coerce(candidate).validate()
            loaded = suite if isinstance(suite, Suite) else load_suite(suite)
            limits = loaded.limits(self.limits)
            env = self.environment(loaded)
            lang = self.language_image(program_language(cand, loaded, language), env)
            image_id = (
                lang.image_id
                if lang is not None
                else env.image_id
                if env is not None
                else self.backend.image_id(self.image)
            )
        except (InvalidInput, SandboxUnavailable, NotImplementedError, ValueError):
            return None
        return evidence_id(
            candidate_sha256=cand.sha256,
            suite_sha256=loaded.sha256,
            image_id=image_id,
            limits=limits.model_dump(),
            environment=_environment_info(env).model_dump() if env is not None else None,
            program=_program_identity(lang),
        )

    # ------------------------------------------------------------------------------
    def check(
        self,
        candidate: CandidateInput,
        suite: SuiteInput,
        *,
        progress: Callable[[int, int], None] | None = None,
        language: str | None = None,
    ) -> Evidence:
        """Verify `candidate` against `suite`.

        Args:
            candidate: a `Path` to the file, a `Candidate` (`Candidate.from_text(source)`), or the
                source itself as str/bytes. A str that looks like a file name raises TypeError.
            suite: a suite folder (Path or str) or a loaded `Suite`.
            progress: called with (tests done, tests collected) as the run goes, a few times a
                second at most, from another thread (programs: cases). Only how far the run has
                come, never the verdict; a backend that cannot report it (Ray) never calls it.
            language: a program suite's language when neither the suite (`[program] language`) nor
                the candidate file's extension names one (`program_language`); a mismatch is
                invalid_input.

        Never raises for a bad candidate, a bad suite or a broken sandbox: the evidence says
        what happened (status invalid_input / infra_error / overloaded), with ok false.
        """
        started = time.monotonic()
        fields = _Fields(self, started)
        try:
            cand = Candidate.coerce(candidate)
            fields.candidate_sha256 = cand.sha256
            fields.candidate_kind = cand.kind
            cand.validate()
        except InvalidInput as exc:
            fields.candidate_sha256 = exc.sha256 or fields.candidate_sha256
            return fields.closed(Status.INVALID_INPUT, str(exc), failures=_refused(exc))
        try:
            loaded = suite if isinstance(suite, Suite) else load_suite(suite)
        except InvalidInput as exc:
            fields.suite_sha256 = exc.sha256
            return fields.closed(Status.INVALID_INPUT, str(exc))
        fields.suite_sha256 = loaded.sha256
        fields.suite = loaded
        try:
            limits = fields.limits = loaded.limits(self.limits)
        except ValueError as exc:
            return fields.closed(Status.INVALID_INPUT, f"the suite's limits are invalid: {exc}")
        fields.candidate_kind = cand.kind
        try:
            env = self.environment(loaded)
        except InvalidInput as exc:
            return fields.closed(Status.INVALID_INPUT, str(exc))
        except SandboxUnavailable as exc:
            return fields.closed(Status.INFRA_ERROR, f"the suite's environment is unavailable: {exc}")
        except NotImplementedError:
            return fields.closed(Status.INFRA_ERROR, "this backend cannot provide a suite's requirements")
        fields.environment = env
        try:
            lang = program_language(cand, loaded, language)
            if lang != "python":  # named in the evidence even when its image cannot be had
                fields.language = LanguageImage(language=lang, tag="", image_id="")
                fields.language = self.language_image(lang, env)
        except InvalidInput as exc:
            return fields.closed(Status.INVALID_INPUT, str(exc))
        except SandboxUnavailable as exc:
            return fields.closed(Status.INFRA_ERROR, f"the {lang} image is unavailable: {exc}")
        except NotImplementedError:
            return fields.closed(Status.INFRA_ERROR, f"this backend cannot run programs in {lang}")
        refused = _refusal(cand, loaded, limits, env, lang)
        if refused is not None:
            return fields.closed(*refused)
        nonce = secrets.token_hex(16)
        try:
            raw = self.backend.run(self._job(cand, loaded, limits, nonce, progress, env, fields.language))
        except SandboxUnavailable as exc:
            return fields.closed(Status.INFRA_ERROR, f"sandbox unavailable: {exc}")
        except HostOverloaded as exc:
            return fields.closed(Status.OVERLOADED, f"the host was too busy: {exc}")
        result = read_result(raw, nonce, limits.output_bytes)
        mismatch = _kernel_mismatch(result, limits)
        if mismatch is not None:
            return fields.closed(Status.INFRA_ERROR, mismatch)
        verdict = judge_result(raw, result)
        durations = Durations(
            total_s=time.monotonic() - started,
            queue_s=raw.queue_s,
            sandbox_s=raw.overhead_s,
            # In-container time not spent running tests: interpreter start and imports on a
            # cold container, next to nothing on a warm one.
            runner_start_s=max(0.0, raw.duration_s - verdict.tests_s),
            tests_s=verdict.tests_s,
            host_wait_s=verdict.host_wait_s,
        )
        return fields.make(
            verdict,
            image_id=raw.image_id,
            durations=durations,
            node=raw.node or _THIS_NODE,
            attempts=raw.attempts,
        )

    def language_image(self, language: str, env: Environment | None = None) -> LanguageImage | None:
        """The image of programs in `language` (None: Python, the sandbox image), found or built
        once per Verifier (`SandboxBackend.language_image`). InvalidInput for a suite with
        requirements in another language (its packages are Python's)."""
        if language == "python":
            return None
        if env is not None:
            raise InvalidInput(f"a suite's requirements are Python packages: a program in {language} cannot have them")
        found = self._languages.get(language)
        if found is None:
            found = self._languages[language] = self.backend.language_image(language, self.image)
        return found

    def _job(
        self,
        cand: Candidate,
        suite: Suite,
        limits: Limits,
        nonce: str,
        progress: Callable[[int, int], None] | None = None,
        env: Environment | None = None,
        lang: LanguageImage | None = None,
    ) -> SandboxJob:
        config = JobConfig(
            budget_s=limits.timeout_s,
            call_timeout_s=limits.call_timeout_s,
            output_bytes=limits.output_bytes,
            reply_bytes=max(64 * 1024, limits.memory_bytes // REPLY_MEMORY_FRACTION),
            max_examples=suite.max_examples,
            uses_hypothesis=suite.uses_hypothesis,
            **_run_settings(suite),
            program=suite.program.config(lang.language if lang else None, limits.memory_bytes)
            if suite.program is not None
            else None,
            progress=progress is not None,
        )
        # The host's own deadline comes after the runner's backstop, so the runner (which can
        # tell a busy host from a slow candidate) normally decides; this kill is the last resort.
        modules = cand.importable(suite.module, suite.declared_modules)
        host_limits = limits.model_copy(
            update={
                "timeout_s": max(limits.timeout_s, limits.call_timeout_s) * OVERLOAD_FACTOR + HOST_GRACE_S,
                "output_bytes": limits.output_bytes * 2 + RESULT_OVERHEAD_BYTES,
            }
        )
        files = cand.files(suite.module)
        if lang is not None:  # one source file, named as its language wants (languages.source_name)
            files = {languages.source_name(lang.language, cand.source): cand.source}
        image = lang.tag if lang is not None else env.tag if env is not None else self.image
        return SandboxJob(
            image=image,
            command=launch_command(
                1,
                PYTEST_PRELOAD if (suite.kind, suite.runner) == ("tests", "pytest") else "",
                data_preload(env.modules, suite.kind) if env is not None and lang is None else "",
            ),
            limits=host_limits,
            stdin=encode_job(nonce, modules, files, suite.files, config),
            mode="launcher",
            progress=None if progress is None else _progress_reader(nonce, progress),
        )

    def fail_closed(self, status: Status, reason: str, *, candidate_sha256: str = "") -> Evidence:
        """Evidence with ok=false for a verification that could not run (e.g. a tool's own failure,
        or a candidate refused before it was made: `candidate_sha256` then names its bytes)."""
        fields = _Fields(self, time.monotonic())
        fields.candidate_sha256 = candidate_sha256
        return fields.closed(status, reason)


class _Fields:
    """What one check has learnt so far, and how it becomes Evidence at any point."""

    def __init__(self, verifier: Verifier, started: float) -> None:
        self.verifier = verifier
        self.started = started
        self.candidate_sha256 = ""
        self.suite_sha256 = ""
        self.suite: Suite | None = None
        self.candidate_kind: Literal["file", "tree"] = "file"
        self.limits = verifier.limits
        self.environment: Environment | None = None
        #: A program in another language than Python: its image.
        self.language: LanguageImage | None = None

    def closed(self, status: Status, reason: str, failures: list[Failure] | None = None) -> Evidence:
        verdict = Verdict(status=status, reason=reason, failures=failures or [])
        return self.make(verdict, image_id="", durations=Durations(total_s=time.monotonic() - self.started))

    def make(self, verdict: Verdict, **extra: Any) -> Evidence:
        suite = self.suite
        env = _environment_info(self.environment) if self.environment is not None else None
        program = _program_info(self.language, verdict)
        eid = evidence_id(
            candidate_sha256=self.candidate_sha256,
            suite_sha256=self.suite_sha256,
            image_id=extra["image_id"],
            limits=self.limits.model_dump(),
            environment=env.model_dump() if env is not None else None,
            program=_program_identity(self.language),
        )
        backend = self.verifier.backend_if_made
        return Evidence(
            evidence_id=eid,
            ok=verdict.status is Status.PASSED,
            status=verdict.status,
            reason=verdict.reason,
            candidate_sha256=self.candidate_sha256,
            candidate_kind=self.candidate_kind,
            suite_sha256=self.suite_sha256,
            counts=verdict.counts,
            failures=verdict.failures,
            limits=self.limits,
            isolation=backend.isolation if backend is not None else "fresh",
            hypothesis=HypothesisSettings(max_examples=suite.max_examples if suite is not None else 100),
            **_run_settings(suite),
            cases=verdict.cases,
            program=program,
            candidate_output_untrusted=truncate(verdict.output, MAX_UNTRUSTED_CHARS),
            candidate_output_truncated=verdict.output_bytes > len(verdict.output.encode())
            or len(verdict.output) > MAX_UNTRUSTED_CHARS,
            verifier_version=__version__,
            environment=env,
            **extra,
        )


class _RunSettings(TypedDict, total=False):
    runner: Runner
    candidate_process: CandidateProcess
    trusted_process: TrustedProcess
    kind: SuiteKind


def _run_settings(suite: Suite | None) -> _RunSettings:
    """How the suite's tests run: what the job carries to the runner and the evidence records,
    from one place so the two cannot differ. Without a suite (a check refused before it had
    one), nothing: the job's and the evidence's own defaults are the protocol's."""
    if suite is None:
        return {}
    return {
        "runner": suite.runner,
        "candidate_process": suite.candidate_process,
        "trusted_process": suite.trusted_process,
        "kind": suite.kind,
    }


def _program_identity(lang: LanguageImage | None) -> dict[str, Any] | None:
    """What evidence_id covers of a program's language: the language and its toolchain."""
    return None if lang is None else {"language": lang.language, "toolchain": list(lang.toolchain)}


def _program_info(lang: LanguageImage | None, verdict: Verdict) -> ProgramInfo | None:
    if lang is None:
        return None
    return ProgramInfo(language=lang.language, toolchain=list(lang.toolchain), compile=verdict.compile)


def program_language(cand: Candidate, suite: Suite, asked: str | None = None) -> str:
    """The language of a program suite's candidate: the suite's `[program] language`, the
    candidate file's extension and `asked` (`--language`) must agree where given; python when
    none is. InvalidInput naming both sides of a mismatch, or an unknown name."""
    named: list[tuple[str, str]] = []
    program = suite.program
    if program is not None and program.language is not None:
        named.append(("the suite", program.language))
    if cand.tree is None and cand.label not in ("<source>", "<files>"):
        by_ext = languages.by_extension(cand.label)
        if by_ext is not None:
            named.append((f"the candidate's extension ({Path(cand.label).suffix})", by_ext))
    if asked is not None:
        canonical = languages.canonical(asked)
        if canonical is None:
            raise InvalidInput(f"unknown language {asked[:40]!r} (one of {', '.join(languages.NAMES)})")
        named.append(("--language", canonical))
    for (who, lang), (other, other_lang) in itertools.pairwise(named):
        if lang != other_lang:
            raise InvalidInput(f"language mismatch: {who} says {lang}, {other} says {other_lang}")
    language = named[0][1] if named else "python"
    if language != "python" and suite.kind != "program":
        raise InvalidInput(
            f"a {language} candidate needs a program suite (kind = 'program'): tests call Python functions"
        )
    if language != "python" and cand.tree is not None:
        raise InvalidInput(f"a program in {language} is one file, not a folder")
    return language


def _environment_info(env: Environment) -> EnvironmentInfo:
    return EnvironmentInfo(
        digest=env.digest, image_id=env.image_id, requirements=list(env.spec.requirements), packages=list(env.packages)
    )


def _check_fits(cand: Candidate, suite: Suite, limits: Limits, env: Environment | None = None) -> None:
    """InvalidInput (naming the candidate's digest) when the sandbox could not set the candidate
    up: a folder's module named like one of the sandbox's or the suite's (`trees.module_conflict`),
    a file over the sandbox's file size limit, or files that do not fit its scratch space. Checked
    here, so that the candidate's own files never make a set-up fail in the sandbox (ours)."""
    files = cand.files(suite.module)

    def refuse(why: str, *paths: str) -> InvalidInput:
        detail = trees.shown(paths) if paths else ""
        return InvalidInput(f"candidate {cand.label} is refused: {why}", sha256=cand.sha256, detail_untrusted=detail)

    taken = {trees.fold(m) for m in env.modules} if env is not None else set()
    clash = sorted(m for m in suite.declared_modules if trees.fold(m.split(".")[0]) in taken)
    if clash:
        raise InvalidInput(f"the suite's module {clash[0]!r} is named like a package of its environment")
    if cand.tree is not None:
        extra = env.modules if env is not None else ()
        conflict = trees.module_conflict(cand.tree, suite.files, suite.declared_modules, extra)
        if conflict is not None:
            raise refuse(conflict[0], *conflict[1])
    biggest = max(files, key=lambda p: len(files[p]))
    if len(files[biggest]) > limits.file_size_bytes:
        raise refuse(
            f"a file of {len(files[biggest])} bytes is over the sandbox's file size limit "
            f"({limits.file_size_bytes} bytes, file_size_bytes)",
            *([biggest] if cand.tree is not None else []),
        )
    needed = trees.footprint(files)
    if needed > limits.scratch_bytes:
        raise refuse(
            f"its files take {needed // 1024} KiB of the sandbox's {limits.scratch_bytes // 1024} KiB "
            "scratch space (scratch_bytes)"
        )


def _refusal(
    cand: Candidate, suite: Suite, limits: Limits, env: Environment | None = None, language: str = "python"
) -> tuple[Status, str, list[Failure]] | None:
    """What is decided before any sandbox runs: a candidate that cannot run under this suite
    (invalid input), or one that cannot even be imported (a syntax error, a module the suite
    imports that the candidate lacks): (status, reason, failures), or None to run it."""
    if suite.kind == "program" and cand.kind == "tree" and f"{suite.module}.py" not in (cand.tree or {}):
        reason = f"a program suite runs one file: pass the program, or a folder with the program as {suite.module}.py"
        return Status.INVALID_INPUT, reason, []
    try:
        _check_fits(cand, suite, limits, env)
    except InvalidInput as exc:
        return Status.INVALID_INPUT, str(exc), _refused(exc) or []
    if language != "python":  # its compiler (or interpreter) judges its syntax, in the sandbox
        return None
    syntax = cand.syntax_error()
    if syntax is not None:
        where, what = syntax
        failure = Failure(
            test_id="<candidate>",
            kind=FailureKind.SYNTAX_ERROR,
            message=f"syntax error at {where}",
            detail_untrusted=what,
        )
        return Status.ERROR, f"the candidate has a syntax error at {where}", [failure]
    missing = [m for m in suite.declared_modules if m not in cand.modules(suite.module)]
    if missing:
        reason = f"the candidate has no module {missing[0]!r}, which the suite imports"
        return Status.ERROR, reason, [Failure(test_id="<candidate>", kind=FailureKind.IMPORT_ERROR, message=reason)]
    return None


def _refused(exc: InvalidInput) -> list[Failure] | None:
    """The candidate-chosen part of a refusal (a file name in its folder), as an untrusted detail."""
    if not exc.detail_untrusted:
        return None
    message = "the candidate was refused (the names it chose are in the detail)"
    return [
        Failure(
            test_id="<candidate>", kind=FailureKind.IMPORT_ERROR, message=message, detail_untrusted=exc.detail_untrusted
        )
    ]


def _kernel_mismatch(result: JobResult | ProtocolError | None, limits: Limits) -> str | None:
    """Why this run's result cannot be evidence under `limits.runtime` (the runner saw another
    kernel), or None. A missing or malformed result is `judge_result`'s to report."""
    return runtime.kernel_mismatch(limits.runtime, result.kernel) if isinstance(result, JobResult) else None


def _progress_reader(nonce: str, progress: Callable[[int, int], None]) -> Callable[[bytes], None]:
    """This job's progress lines (its nonce) to `progress`; anything else is ignored."""

    def read(line: bytes) -> None:
        told = parse_progress_line(line, nonce)
        if told is not None:
            progress(*told)

    return read
