#!/usr/bin/env bash
# The project's test command (README): lint, types, and the whole test suite against the
# real Docker engine. Extra arguments go to pytest.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
source scripts/env.sh
bash scripts/ensure-docker.sh
verifier image build
echo "== ruff"
ruff check verifier tests examples
ruff format --check verifier tests examples
echo "== mypy"
mypy
echo "== pytest"
# pytest exits 5 when it collected no tests: that fails here too (set -e).
python -m pytest "$@"
