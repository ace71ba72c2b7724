#!/usr/bin/env bash
# The main job, from a fresh machine: environment, Docker engine, sandbox image, then verify
# the find_duplicates showcase: good.py must pass, buggy_set.py must fail on unhashable values.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# The main job needs the core only (no extra): the tests install the rest (scripts/test.sh).
source scripts/env.sh ""
bash scripts/ensure-docker.sh
verifier image build
EX=examples/find_duplicates
echo "== verifier check $EX/good.py --suite $EX/suite"
verifier check "$EX/good.py" --suite "$EX/suite"
echo "== verifier check $EX/buggy_set.py --suite $EX/suite   (expected: NOT OK)"
set +e
verifier check "$EX/buggy_set.py" --suite "$EX/suite"
rc=$?
set -e
if [[ $rc -ne 1 ]]; then
  echo "demo: expected buggy_set.py to fail verification (exit 1), got exit $rc" >&2
  exit 1
fi
echo "demo: good.py verified, buggy_set.py rejected, as expected."
