#!/usr/bin/env bash
# Make a Docker engine answer on this host, with gVisor's runsc registered as a runtime.
# Idempotent: does nothing when `docker info` answers and already lists the runsc runtime.
#
# Engine: on a bare Debian/Ubuntu host (root), installs Debian's docker.io (and debootstrap,
# which the offline image build uses) and starts dockerd in the background, waiting until it
# answers.
# gVisor (`--runtime gvisor`, Limits.runtime="gvisor"): installs the distribution's runsc and
# registers it in /etc/docker/daemon.json as runtime "runsc" with --platform=ptrace
# --network=none, keeping every other setting there and making "default-runtime": "runc"
# explicit, then sends dockerd SIGHUP (runtimes reload without a restart). VERIFIER_GVISOR=0
# skips this part.
set -euo pipefail

WAIT_S="${VERIFIER_DOCKER_WAIT_S:-60}"
LOG="${VERIFIER_DOCKERD_LOG:-/var/log/verifier-dockerd.log}"
DAEMON_JSON="${VERIFIER_DAEMON_JSON:-/etc/docker/daemon.json}"
GVISOR="${VERIFIER_GVISOR:-1}"
#: The runtime name verifier asks the engine for (verifier/sandbox/hardening.py: GVISOR_RUNTIME).
RUNSC_NAME="runsc"

say() { echo "ensure-docker: $*" >&2; }

is_root() { [[ $(id -u) -eq 0 ]]; }

apt_install() {
  if ! is_root || ! command -v apt-get >/dev/null 2>&1; then
    say "$1"
    exit 1
  fi
  shift
  say "installing $* from the distribution's packages"
  apt-get update -qq
  NEEDRESTART_SUSPEND=1 DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

wait_for_engine() {
  local i
  for ((i = 0; i < WAIT_S * 2; i++)); do
    if docker info >/dev/null 2>&1; then
      say "engine answers after $((i / 2)) s"
      return 0
    fi
    sleep 0.5
  done
  say "dockerd did not answer within ${WAIT_S} s; last lines of $LOG:"
  tail -n 20 "$LOG" >&2 || true
  exit 1
}

ensure_engine() {
  if docker info >/dev/null 2>&1; then
    return 0
  fi
  local missing=()
  command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
  command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
  if [[ "$GVISOR" != "0" ]] && ! command -v runsc >/dev/null 2>&1; then
    missing+=(runsc) # one apt-get run for all; registered below
  fi
  if ((${#missing[@]})); then
    apt_install "no Docker engine answers and I can only install one as root on Debian/Ubuntu; install Docker and start it" \
      "${missing[@]}"
  fi
  if ! is_root; then
    say "dockerd is installed but not answering, and starting it needs root"
    exit 1
  fi
  # A dockerd that is still starting up: wait for it instead of starting a second one.
  if ! pgrep -x dockerd >/dev/null 2>&1; then
    # A daemon that was killed can leave its pid file behind, and a new one refuses to start.
    rm -f /var/run/docker.pid
    say "starting dockerd (log: $LOG)"
    nohup dockerd >>"$LOG" 2>&1 </dev/null &
  fi
  wait_for_engine
}

runsc_registered() {
  docker info --format '{{json .Runtimes}}' 2>/dev/null | python3 -c \
    "import json, sys; sys.exit(0 if '$RUNSC_NAME' in json.load(sys.stdin) else 1)"
}

ensure_gvisor() {
  if runsc_registered; then
    return 0
  fi
  command -v runsc >/dev/null 2>&1 ||
    apt_install "gVisor's runsc is not installed, and I can only install it as root on Debian/Ubuntu (apt-get install runsc)" \
      runsc
  if ! is_root; then
    say "runsc is installed but not registered with dockerd, and registering it needs root"
    exit 1
  fi
  local runsc
  runsc="$(command -v runsc)"
  say "registering $runsc as Docker runtime '$RUNSC_NAME' in $DAEMON_JSON"
  mkdir -p "$(dirname "$DAEMON_JSON")"
  # Merge, never overwrite: every other setting (and every other runtime) stays as it was.
  python3 - "$DAEMON_JSON" "$RUNSC_NAME" "$runsc" <<'PY'
import json, os, sys
path, name, binary = sys.argv[1:]
try:
    with open(path) as fh:
        config = json.load(fh)
except FileNotFoundError:
    config = {}
config.setdefault("runtimes", {})[name] = {"path": binary, "runtimeArgs": ["--platform=ptrace", "--network=none"]}
# Explicit, so a reload never keeps an older default (dockerd keeps it when the key is absent).
config.setdefault("default-runtime", "runc")
tmp = f"{path}.verifier-tmp"
with open(tmp, "w") as fh:
    json.dump(config, fh, indent=2)
    fh.write("\n")
os.replace(tmp, path)
PY
  local pid
  pid="$(cat /var/run/docker.pid 2>/dev/null || pgrep -xo dockerd || true)"
  if [[ -z "$pid" ]]; then
    say "no dockerd process to reload"
    exit 1
  fi
  kill -HUP "$pid"
  local i
  for ((i = 0; i < 40; i++)); do
    if runsc_registered; then
      say "runtime '$RUNSC_NAME' registered"
      return 0
    fi
    sleep 0.25
  done
  say "dockerd did not load runtime '$RUNSC_NAME' after SIGHUP; is $DAEMON_JSON valid? last lines of $LOG:"
  tail -n 5 "$LOG" >&2 || true
  exit 1
}

ensure_engine
if [[ "$GVISOR" != "0" ]]; then
  ensure_gvisor
fi
