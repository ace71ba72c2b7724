#!/usr/bin/env bash
# Build the example repository (make_repo.py) and review each of its changes with
# `verifier review`; each review's markdown (what a PR comment would show) goes to reviews/,
# and reviews/exit-codes.txt records each command with its exit code.
#
#   bash examples/review/reviews.sh [REPO_DIR]      (needs `verifier` on PATH and Docker)
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="${1:-$(mktemp -d)/rangeset}"
python3 "$HERE/make_repo.py" "$REPO" >/dev/null
OUT="$HERE/reviews"
mkdir -p "$OUT"
: >"$OUT/exit-codes.txt"

review() {
  local name="$1"
  shift
  verifier review "$REPO" --base main "$@" >"$OUT/$name.md"
  local code=$?
  local args="$*"
  echo "verifier review REPO --base main ${args//$HERE/examples/review} -> exit $code" | tee -a "$OUT/exit-codes.txt"
}

review fix-adjacent-ranges --head fix-adjacent-ranges
review simpler-contains --head simpler-contains
review comma-space --head comma-space
review comma-space.tests-base --head comma-space --tests base
review from-integers --head from-integers
review fix-adjacent-ranges.patch --patch "$HERE/changes/01-fix-adjacent-ranges.patch"
