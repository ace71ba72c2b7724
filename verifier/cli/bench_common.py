"""What the `verifier bench` commands share: option checks, the evidence store beside a run's results,
the image on this machine and a run's failures, the summary and its exit code, the report."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from verifier._distribution import install_hint
from verifier.bench.passk import (
    DEFAULT_KS,
)
from verifier.cli.common import (
    EXIT_BUSY,
    fail,
    require_runtime,
    sandbox_failure,
    say_error,
    stderr,
)
from verifier.limits import RunPolicy, Runtime

if TYPE_CHECKING:  # loaded when a command runs (every `verifier` command imports this module)
    from verifier.bench.store import EvidenceStore


REFERENCE_KS = ",".join(map(str, DEFAULT_KS))


REPORT_HELP = (
    "Also write a report into DIR: index.html (one self-contained page: pass@k and pass rate per problem, "
    "status counts, latency, where the time went, what failed how; opens offline), summary.png (for a README) "
    "and report.json. Made from the results and evidence files, so `verifier bench report` can make it later."
)


RAY_HELP = (
    "Verify on a Ray cluster (needs {hint}): its address, or auto for RAY_ADDRESS or the cluster started on "
    "this machine. A warm pool on every node; --workers defaults to the cluster's slots. See docs/scale.md."
)


# The options both `verifier bench` commands take, said once (typer reads them from the signatures).
PolicyOption = Annotated[
    RunPolicy, typer.Option(help="reuse (fast), fresh (a container per sample) or cold (no pool).")
]
SanitizeOption = Annotated[
    bool,
    typer.Option(
        "--sanitize",
        help="Samples are models' chat answers: verify the code taken out of each (EvalPlus's sanitize: the "
        "last fenced Python block that parses, or the whole text when it is code, <think> dropped; see "
        "verifier/extract.py). An answer with no code is invalid_input, never run.",
    ),
]
RuntimeOption = Annotated[Runtime, typer.Option(help="Container runtime: runc, or gvisor (gVisor's runsc; slower).")]
RayOption = Annotated[
    str | None, typer.Option("--ray", metavar="ADDRESS", help=escape(RAY_HELP.format(hint=install_hint("ray"))))
]
ReportOption = Annotated[Path | None, typer.Option("--report", metavar="DIR", help=REPORT_HELP)]
#: The most retries of an overloaded sample an option may ask for.
MAX_OVERLOADED_RETRIES = 10
OverloadedRetriesOption = Annotated[
    int | None,
    typer.Option(
        "--overloaded-retries",
        metavar="N",
        min=0,
        max=MAX_OVERLOADED_RETRIES,
        help="Try a sample that ended overloaded (the machine too busy to judge it: not the model's doing) again "
        "up to N times (default 3, verifier.batch.OVERLOADED_RETRIES), after pauses of about 2, 4, 8 s... "
        "(doubling, at random within half of each); one that stays overloaded is counted apart, left out of "
        "pass@k, and makes the exit code 3.",
    ),
]


def parse_ks(text: str) -> list[int]:
    try:
        ks = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        ks = []
    if not ks or any(k < 1 for k in ks):
        raise fail(
            f"--k must be positive integers separated by commas (e.g. {REFERENCE_KS}), not {text!r}", option="--k"
        )
    return sorted(set(ks))


#: What reading a bench's inputs raises for bad input (a file that cannot be read, a bad line).
INPUT_ERRORS = (OSError, ValueError)


def input_failure(exc: Exception, samples: Path, problems: Path | None) -> typer.Exit:
    """Bad input, as one line that names the option."""
    if isinstance(exc, OSError):
        what = "--problems" if problems is not None and exc.filename == str(problems) else "SAMPLES"
        return fail(f"{what}: cannot read {exc.filename or samples}: {exc.strerror or exc}", option=what)
    return fail(str(exc))


def require_file(path: Path, option: str, what: str) -> None:
    if not path.is_file():
        raise fail(f"{option}: {what} file {path} does not exist", option=option)


def alias(value: Any, alias: Any, option: str, reference: str, whose: str = "the reference's") -> Any:
    """An option given by its name or by the reference's (or EvalPlus's) name for it (not both)."""
    if alias is None:
        return value
    if value is not None:
        raise fail(f"{reference} is {option} under {whose} name: give one of them", option=option)
    return alias


def store_path(samples: Path) -> Path:
    from verifier.bench.store import store_path

    return store_path(samples)


def open_store(path: Path, *, fresh: bool) -> EvidenceStore:
    from verifier.bench.store import EvidenceStore

    try:
        return EvidenceStore(path, fresh=fresh)
    except (OSError, ValueError) as exc:
        raise fail(f"evidence store: {exc}", option="--no-cache") from None


def interrupted(store: EvidenceStore, kept: int) -> typer.Exit:
    """Ctrl-C during a bench run: what was kept of it, and how to go on (exit 130, as a shell's)."""
    stderr().print(
        f"interrupted: {len(store)} verdicts are saved in {escape(str(store.path))} ({len(store) - kept} from this "
        "run); run the same command again to verify only the rest (--no-cache starts over)"
    )
    return typer.Exit(130)


def report_summary(summary: dict[str, Any], json_out: Path | None, whose: str) -> None:
    """Print the summary (and write it to --json-out); exit 2 when any sample got no verdict."""
    print(json.dumps(summary, indent=2))
    if json_out:
        json_out.write_text(json.dumps(summary, indent=2) + "\n")
    plus = summary.get("plus", {})
    unverified = summary["infra_errors"] + plus.get("infra_errors", 0)
    if unverified:
        raise fail(
            f"{unverified} sample(s) could not be verified (infra_error); "
            f"they are not verdicts on {whose}, and pass@k counts them as failed: rerun them",
            status="infra_error",
        )
    busy = summary.get("overloaded", 0) + plus.get("overloaded", 0)
    if busy:
        say_error(
            f"{busy} sample(s) stayed overloaded after their retries (the machine was too busy to judge "
            f"them); they are not verdicts on {whose} and pass@k leaves them out: rerun to verify only those"
        )
        raise typer.Exit(EXIT_BUSY)


def check_inputs(
    samples: Path, problems: Path | None, *, ray: str | None, policy: RunPolicy, report: Path | None
) -> None:
    """What every bench command checks first, in this order, before any sandbox starts: --ray with
    --policy, --report DIR, the SAMPLES file and the --problems file (when one is given)."""
    check_ray_policy(ray, policy)
    check_report_dir(report)
    require_file(samples, "SAMPLES", "samples")
    if problems is not None:
        require_file(problems, "--problems", "problems")


def check_workers(workers: int | None) -> None:
    if workers is not None and workers < 1:
        raise fail(f"--workers must be at least 1, not {workers}", option="--workers")


def local_image(runtime: Runtime) -> str:
    """The sandbox image on this machine's engine, built when missing, after checking that the
    engine has `runtime` (one connection for both, closed after). Raises SandboxUnavailable."""
    from verifier.limits import Limits
    from verifier.sandbox.docker_engine import connect
    from verifier.sandbox.image import build

    engine = connect()
    try:
        require_runtime(Limits(runtime=runtime), client=engine)
        return build(engine)[0]
    finally:
        engine.close()


@contextmanager
def run_failures(store: EvidenceStore) -> Iterator[None]:
    """Around a bench run: an engine, image or runtime we could not use is a one-line failure
    (infra_error); Ctrl-C says what the store kept and how to go on (`interrupted`)."""
    from verifier.errors import SandboxUnavailable

    kept = len(store)
    try:
        yield
    except SandboxUnavailable as exc:
        raise sandbox_failure(exc) from None
    except KeyboardInterrupt:
        raise interrupted(store, kept) from None


def run_summary(summary: dict[str, Any], results: Path, samples: Path) -> dict[str, Any]:
    """A run's summary with where its results and evidence are."""
    return {**summary, "results": str(results), "evidence": str(store_path(samples))}


def finish(
    summary: dict[str, Any], results: Path, *, report: Path | None, json_out: Path | None, ks: list[int], whose: str
) -> None:
    """The end of every bench command: --report DIR, then the summary and the exit code."""
    make_report(results, report, summary, ks)
    report_summary(summary, json_out, whose)


def check_ray_policy(ray: str | None, policy: RunPolicy) -> None:
    if ray is not None and policy == "cold":
        raise fail("--policy cold: --ray runs warm pools on the nodes: use --policy reuse or fresh", option="--policy")


def check_report_dir(report: Path | None, option: str = "--report") -> None:
    """--report DIR, checked before any sandbox starts: a folder, or a path one can be made at."""
    if report is not None and report.exists() and not report.is_dir():
        raise fail(f"{option}: {report} exists and is not a folder", option=option)


def make_report(results: Path, report: Path | None, summary: dict[str, Any], ks: list[int]) -> None:
    """--report DIR: the run's report, from the files it just wrote (`verifier.bench.report`)."""
    if report is None:
        return
    try:
        from verifier.bench.report import write_report
    except ImportError:
        raise fail(f"--report needs matplotlib: {install_hint('bench')}", option="--report") from None
    try:
        files = write_report(results, report, summary=summary, ks=ks)
    except (OSError, ValueError) as exc:
        raise fail(f"--report: cannot write the report into {report}: {exc}", option="--report") from None
    stderr().print(f"report: {escape(str(files.html))} (summary picture: {escape(str(files.png))})")
