"""Pre-merge review: a repository's own tests on both sides of a change, in the sandbox.

    from verifier.review import ReviewRequest, review
    ev = review(ReviewRequest(repo=Path("."), base="main", head="HEAD"))
    ev.ok, ev.counts.broken, ev.review_id

Modules, one job each: `gitread` (trees through git, patch, tree ids), `pytest_config`
(pytest's configuration file and options, as pytest finds and reads them), `pytest_options`
(pytest's command-line options: `--pytest-args` checked, paths in `addopts`), `split` (tests vs
code as pytest's session sees them, the trees a run sees), `provenance` (unchanged / added / edited tests), `deps`
(declared dependencies, the project itself), `environment` (dependency images, offline),
`sandbox_runs` (the two runs' containers), `supervisor_result` (the in-container result line,
parsed), `classify` (the table and the verdict), `review_evidence` (`ReviewEvidence`, the
review's report model), `reports` (markdown, json, junit, sarif),
`service` (`review()`). The in-container side is verifier/runner/review_plugin.py; what both
sides must agree on (command, paths, header, result line) is verifier/runner/review_protocol.py.
"""

from verifier.limits import REVIEW_LIMITS
from verifier.review.review_evidence import ReviewEvidence, TestClass, review_json_schema
from verifier.review.service import ReviewRequest, review

__all__ = ["REVIEW_LIMITS", "ReviewEvidence", "ReviewRequest", "TestClass", "review", "review_json_schema"]
