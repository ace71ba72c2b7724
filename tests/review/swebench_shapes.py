"""SWE-bench's report files as its harness writes them, for comparison with ours.

Written from SWE-bench's source (github.com/SWE-bench/SWE-bench, tag v4.1.0; the same fields at
7a21e05 on main, which adds infra_failure fields): the per-instance map is
`swebench/harness/grading.py:get_eval_report` with `include_tests_status=True` (and
`get_eval_tests_report`: FAIL_TO_PASS, PASS_TO_PASS, FAIL_TO_FAIL, PASS_TO_FAIL, each with
`success` and `failure`; the last two empty unless `calculate_to_fail`), dumped by
`swebench/harness/run_evaluation.py:run_instance` with `json.dumps(report, indent=4)` to
`logs/run_evaluation/<run_id>/<model_name_or_path with / -> __>/<instance_id>/report.json`
(`swebench/harness/constants`: RUN_EVALUATION_LOG_DIR, LOG_REPORT); the run summary is
`swebench/harness/reporting.py:make_run_report` (without a Docker client), written with
`json.dumps(report, indent=4)` to `<report_dir>/<model_name_or_path with / -> __>.<run_id>.json`.
Predictions are read by `swebench/harness/utils.py:get_predictions_from_file`: `.json` holds a
list or an object keyed by instance id (its values taken), `.jsonl` one object per line.
"""

from __future__ import annotations

from typing import Any

#: run_evaluation.py's path of an instance's report (relative to the harness's working directory).
INSTANCE_REPORT = "logs/run_evaluation/{run_id}/{model}/{instance_id}/report.json"
#: reporting.py's run summary (report_dir ".").
RUN_REPORT = "{model}.{run_id}.json"


def instance_report(instance_id: str, resolved: bool, f2p: tuple[list[str], list[str]],
                    p2p: tuple[list[str], list[str]]) -> dict[str, Any]:  # fmt: skip
    """grading.py get_eval_report(..., include_tests_status=True) for an evaluated prediction."""
    return {
        instance_id: {
            "patch_is_None": False,
            "patch_exists": True,
            "patch_successfully_applied": True,
            "resolved": resolved,
            "tests_status": {
                "FAIL_TO_PASS": {"success": f2p[0], "failure": f2p[1]},
                "PASS_TO_PASS": {"success": p2p[0], "failure": p2p[1]},
                "FAIL_TO_FAIL": {"success": [], "failure": []},
                "PASS_TO_FAIL": {"success": [], "failure": []},
            },
        }
    }


#: reporting.py make_run_report's keys, in its order (client=None).
RUN_REPORT_KEYS = [
    "total_instances",
    "submitted_instances",
    "completed_instances",
    "resolved_instances",
    "unresolved_instances",
    "empty_patch_instances",
    "error_instances",
    "completed_ids",
    "incomplete_ids",
    "empty_patch_ids",
    "submitted_ids",
    "resolved_ids",
    "unresolved_ids",
    "error_ids",
    "schema_version",
]


def run_report(
    *, total: int, submitted: list[str], resolved: list[str], unresolved: list[str], empty: list[str],
    errors: list[str], incomplete: list[str],
) -> dict[str, Any]:  # fmt: skip
    completed = sorted(resolved + unresolved)
    return {
        "total_instances": total,
        "submitted_instances": len(submitted),
        "completed_instances": len(completed),
        "resolved_instances": len(resolved),
        "unresolved_instances": len(unresolved),
        "empty_patch_instances": len(empty),
        "error_instances": len(errors),
        "completed_ids": completed,
        "incomplete_ids": sorted(incomplete),
        "empty_patch_ids": sorted(empty),
        "submitted_ids": sorted(submitted),
        "resolved_ids": sorted(resolved),
        "unresolved_ids": sorted(unresolved),
        "error_ids": sorted(errors),
        "schema_version": 2,
    }
