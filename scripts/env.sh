#!/usr/bin/env bash
# Sourced by the other scripts: the project's virtualenv, installed and current.
#
#   source scripts/env.sh              every extra: dev, agents, bench, ray, serve (what the tests need)
#   source scripts/env.sh all          the same, said (a script that sources this one without an
#                                      argument passes it its own arguments: say which)
#   source scripts/env.sh ""           the core only: `verifier check` and `verifier image build`
#   source scripts/env.sh bench,serve  those extras
#
# Installs only when pyproject.toml changed since the last install, or when an extra asked for
# is not installed yet (a venv with every extra serves a call that asks for fewer).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${VERIFIER_VENV:-$ROOT/.venv}"
PY="${PYTHON:-python3}"
ALL_EXTRAS="dev,agents,bench,ray,serve"
EXTRAS="${1-all}"
[[ "$EXTRAS" == "all" ]] && EXTRAS="$ALL_EXTRAS"
if [[ ! -x "$VENV/bin/python" ]]; then
  echo "env: creating $VENV" >&2
  "$PY" -m venv "$VENV"
fi
stamp="$VENV/.verifier-installed"
project="$(sha256sum "$ROOT/pyproject.toml" | cut -d' ' -f1)"
# The stamp: the pyproject.toml digest, then the extras installed with it (comma-separated).
had_project="" had_extras=""
[[ -f "$stamp" ]] && read -r had_project had_extras <"$stamp" || true
missing=""
for extra in ${EXTRAS//,/ }; do
  [[ ",${had_extras:-}," == *",$extra,"* ]] || missing="$missing $extra"
done
if [[ "$had_project" != "$project" || -n "$missing" ]]; then
  [[ "$had_project" == "$project" ]] && EXTRAS="$(echo "${had_extras:-},$EXTRAS" | tr ',' '\n' | sed '/^$/d' | sort -u | paste -sd, -)"
  echo "env: installing verifier${EXTRAS:+ with the extras $EXTRAS} into $VENV" >&2
  # --no-compile: pip would byte-compile every file of every package (pygments' hundreds of
  # lexers included); Python compiles what is imported, once, on first use instead. A third
  # less of the core's install time (measured: docs/performance.md).
  "$VENV/bin/python" -m pip install --quiet --no-compile -e "$ROOT${EXTRAS:+[$EXTRAS]}"
  echo "$project $EXTRAS" >"$stamp"
fi
# ... but where PYTHONDONTWRITEBYTECODE is set (this machine, many CI runners and images),
# "once" is every start: each `verifier` command compiled what it imported again (0.3-0.7 s of
# a CLI start). So the venv's packages are compiled here, once after each install, in parallel,
# whatever the caller's setting: a few seconds.
compiled="$VENV/.verifier-compiled"
if [[ "$(cat "$compiled" 2>/dev/null || true)" != "$(cat "$stamp")" ]]; then
  env -u PYTHONDONTWRITEBYTECODE "$VENV/bin/python" -m compileall -q -j 0 "$VENV/lib" >/dev/null || true
  cat "$stamp" >"$compiled"
fi
# The project's own modules (an editable install: its sources, which change between runs):
# compiled when changed, a tenth of a second when nothing did.
env -u PYTHONDONTWRITEBYTECODE "$VENV/bin/python" -m compileall -q -j 0 "$ROOT/verifier" >/dev/null || true
export PATH="$VENV/bin:$PATH"
