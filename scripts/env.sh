#!/usr/bin/env bash
# Sourced by the other scripts: the project's virtualenv, installed and current.
# Re-installs only when pyproject.toml (or the extras below) changed since the last install.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VERIFIER_VENV:-$ROOT/.venv}"
PY="${PYTHON:-python3}"
if [[ ! -x "$VENV/bin/python" ]]; then
  echo "env: creating $VENV" >&2
  "$PY" -m venv "$VENV"
fi
EXTRAS="dev,agents,bench,ray,serve"
stamp="$VENV/.verifier-installed"
want="$( (cat "$ROOT/pyproject.toml"; echo "$EXTRAS") | sha256sum | cut -d' ' -f1)"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$want" ]]; then
  echo "env: installing verifier and its dependencies into $VENV" >&2
  "$VENV/bin/python" -m pip install --quiet --upgrade pip >/dev/null 2>&1 || true
  "$VENV/bin/python" -m pip install --quiet -e "$ROOT[$EXTRAS]"
  echo "$want" >"$stamp"
fi
export PATH="$VENV/bin:$PATH"
