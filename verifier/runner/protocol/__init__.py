"""The host-runner protocol: the one package both sides import (standard library only).

Its modules, one job each: `constants` (ids, paths, markers, vocabularies, limits, the launch
command), `kernel` (the kernel probe), `strings` (the protocol's error, valid Unicode, summaries),
`jobs` (job framing), `records` (what a result holds), `budget` (the result line's byte budget),
`results` (the result and progress lines, written and parsed). Import from the package: every name
is here.

The host imports it as `verifier.runner.protocol`; inside the sandbox image it is
`verifier_runner.protocol`. Everything the two sides must agree on lives here: user ids and
paths in the container, the command that starts the runner, how a job is framed on the
runner's stdin, and how its result comes back as one line on the runner's stdout.

Job (host -> runner, on stdin)::

    {"nonce": ..., "modules": [...], "candidate_bytes": N, "suite_bytes": M, "config": {...},
     "version": PROTOCOL_VERSION}\\n                                       (a `JobHeader`)
    <N bytes: the candidate's files, JSON {"files": {path: base64}}>
    <M bytes: the suite's files, the same form>

Result (runner -> host, on the stdout only the trusted server holds)::

    VERIFIER-RESULT <nonce> <recycle 0|1> {json: JobResult}\\n

Progress (runner -> host, the same stdout, before the result; only when the job's config asks
for it, `JobConfig.progress`)::

    VERIFIER-PROGRESS <nonce> <done> <total>\\n

Tests (or cases) finished so far of those collected, at most a few a second. It says how far a
run has come, never what it means: the verdict comes from the result line alone.

A server that takes more jobs (a warm pool's) says ``VERIFIER-READY`` when it starts and again
after each result once the candidate side is reset; the host may send the next job at once, but
starts that job's clock only at READY (a sandbox that cannot be reset ends instead).

`recycle` sits outside the JSON so a pool can read it without decoding the result. The
result is built by trusted code only, but it carries candidate-controlled text (output,
exception messages); `parse_result` checks every field's type, size and vocabulary before
the host uses any of it, and every string is made valid Unicode.
"""

from __future__ import annotations

from .budget import (
    CASE_FIELD_JSON,
    CASE_JSON_BYTES,
    ERROR_JSON_BYTES,
    FAILURE_FIELD_JSON,
    FAILURE_JSON_BYTES,
    RESULT_FIXED_JSON_BYTES,
    RESULT_OVERHEAD_BYTES,
    bounded_case,
    bounded_failure,
    bounded_result,
    cut_marker,
    fetch_bytes,
    fetched_json_bytes,
    fit,
    json_size,
    kept_output_bytes,
)
from .constants import (
    BASE_ENV,
    CANDIDATE_DIR,
    CANDIDATE_PROCESS,
    CANDIDATE_UID,
    CANDIDATE_WRITABLE,
    CASE_OUTCOMES,
    COMPARE_MODES,
    DEFAULT_CANDIDATE_PROCESS,
    DEFAULT_KIND,
    DEFAULT_RUNNER,
    DEFAULT_TRUSTED_PROCESS,
    FAILURE_KINDS,
    IMAGE_MODULES,
    KERNEL_ENV,
    KERNELS,
    KINDS,
    MAX_CASES,
    MAX_DETAIL,
    MAX_EXAMPLE,
    MAX_FAILURES,
    MAX_FETCH_FILES,
    MAX_FETCH_PATH,
    MAX_LINE,
    MAX_SUMMARY,
    MAX_TEST_ID,
    OVERLOAD_FACTOR,
    PRELOADABLE,
    PROGRESS_INTERVAL_S,
    PROGRESS_PREFIX,
    PROTOCOL_VERSION,
    PYTEST_PRELOAD,
    READY,
    RESULT_PREFIX,
    RUNNERS,
    SCRATCH_DIR,
    SUITE_DIR,
    TRUSTED_DIR,
    TRUSTED_PROCESS,
    TRUSTED_UID,
    ZYGOTE_UID,
    CandidateProcess,
    Runner,
    SuiteKind,
    TrustedProcess,
    data_preload,
    is_launch_command,
    launch_command,
    launch_data,
)
from .jobs import (
    JobConfig,
    JobHeader,
    ProgramConfig,
    encode_job,
    module_names,
    plain,
    read_exact,
    read_job,
    tree,
    untree,
)
from .kernel import observed_kernel
from .records import CaseRecord, CompileRecord, FailureRecord, FetchedRecord, JobCounts, JobResult
from .results import (
    _optional_b64,
    format_progress_line,
    format_result_line,
    parse_progress_line,
    parse_result,
    split_result_line,
)
from .strings import ProtocolError, clean, summary_line

__all__ = [
    "BASE_ENV",
    "CANDIDATE_DIR",
    "CANDIDATE_PROCESS",
    "CANDIDATE_UID",
    "CANDIDATE_WRITABLE",
    "CASE_FIELD_JSON",
    "CASE_JSON_BYTES",
    "CASE_OUTCOMES",
    "COMPARE_MODES",
    "DEFAULT_CANDIDATE_PROCESS",
    "DEFAULT_KIND",
    "DEFAULT_RUNNER",
    "DEFAULT_TRUSTED_PROCESS",
    "ERROR_JSON_BYTES",
    "FAILURE_FIELD_JSON",
    "FAILURE_JSON_BYTES",
    "FAILURE_KINDS",
    "IMAGE_MODULES",
    "KERNELS",
    "KERNEL_ENV",
    "KINDS",
    "MAX_CASES",
    "MAX_DETAIL",
    "MAX_EXAMPLE",
    "MAX_FAILURES",
    "MAX_FETCH_FILES",
    "MAX_FETCH_PATH",
    "MAX_LINE",
    "MAX_SUMMARY",
    "MAX_TEST_ID",
    "OVERLOAD_FACTOR",
    "PRELOADABLE",
    "PROGRESS_INTERVAL_S",
    "PROGRESS_PREFIX",
    "PROTOCOL_VERSION",
    "PYTEST_PRELOAD",
    "READY",
    "RESULT_FIXED_JSON_BYTES",
    "RESULT_OVERHEAD_BYTES",
    "RESULT_PREFIX",
    "RUNNERS",
    "SCRATCH_DIR",
    "SUITE_DIR",
    "TRUSTED_DIR",
    "TRUSTED_PROCESS",
    "TRUSTED_UID",
    "ZYGOTE_UID",
    "CandidateProcess",
    "CaseRecord",
    "CompileRecord",
    "FailureRecord",
    "FetchedRecord",
    "JobConfig",
    "JobCounts",
    "JobHeader",
    "JobResult",
    "ProgramConfig",
    "ProtocolError",
    "Runner",
    "SuiteKind",
    "TrustedProcess",
    "_optional_b64",
    "bounded_case",
    "bounded_failure",
    "bounded_result",
    "clean",
    "cut_marker",
    "data_preload",
    "encode_job",
    "fetch_bytes",
    "fetched_json_bytes",
    "fit",
    "format_progress_line",
    "format_result_line",
    "is_launch_command",
    "json_size",
    "kept_output_bytes",
    "launch_command",
    "launch_data",
    "module_names",
    "observed_kernel",
    "parse_progress_line",
    "parse_result",
    "plain",
    "read_exact",
    "read_job",
    "split_result_line",
    "summary_line",
    "tree",
    "untree",
]
