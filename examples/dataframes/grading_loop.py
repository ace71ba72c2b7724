"""The dataframe task (task.md), graded with sandboxed evidence in a Deep Agents loop.

The same loop as examples/find_duplicates/rubric_loop.py (a working model, a grading model
with Deep Agents' RubricMiddleware calling the `run_test_suite` evidence tool, the fail-closed
gate), on a suite that declares packages (numpy, pandas): the tool runs the candidate on the
suite's environment image, and its frames and arrays cross the sandbox's boundary as data.

Needs the agents extra and a running Docker engine; the first run builds the environment image
(resolved on the host, wheels only, about a minute), later runs build nothing.

    python examples/dataframes/grading_loop.py              # offline: scripted models
    WORKING_MODEL=openai:gpt-5.1 GRADER_MODEL=openai:gpt-5.1-mini python ... --online

Offline, the worker's first answer is wrong/sample_std.py (numpy's sample standard deviation),
its answer after the grader's feedback is good.py.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TASK = """Implement revenue_by_region(sales) and zscores(values) in one module.
revenue_by_region(sales: pd.DataFrame) -> pd.DataFrame: sales has the columns region (str),
units (int) and price (float); return one row per region with the columns region and revenue
(the sum of units * price), sorted by revenue, largest first, ties by region name, index
0..n-1; do not change sales. zscores(values: np.ndarray) -> np.ndarray: (x - mean) / std with
the population standard deviation (ddof=0); all zeros when it is 0 or there are fewer than two
values; same shape, float64. Reply with the source in one ```python block."""
RUBRIC = """- Before returning satisfied, call run_test_suite for the latest candidate.
- The run_test_suite result must contain ok: true and latest candidate: yes.
- revenue_by_region and zscores meet the task, and the input frame is not changed."""
CRITERIA = (
    "run_test_suite reports ok: true for the latest candidate",
    "revenue_by_region and zscores meet the task (order, ddof=0, no mutation)",
)


def _loop() -> object:
    """examples/find_duplicates/rubric_loop.py, the loop itself (this example only sets the scene)."""
    spec = importlib.util.spec_from_file_location(
        "verifier_example_rubric_loop", HERE.parent / "find_duplicates" / "rubric_loop.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks itself up there
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    loop = _loop()
    scenario = loop.Scenario(  # type: ignore[attr-defined]
        title="dataframes",
        suite=HERE / "suite",
        task=TASK,
        rubric=RUBRIC,
        criteria=CRITERIA,
        first=HERE / "wrong" / "sample_std.py",
        first_words="Here is my implementation:",
        second=HERE / "good.py",
        second_words="Revised: the z-scores use the population standard deviation (ddof=0):",
    )
    return int(loop.main(argv, scenario=scenario, doc=__doc__))  # type: ignore[attr-defined]


if __name__ == "__main__":
    sys.exit(main())
