#!/usr/bin/env bash
# Make a Docker engine answer on this host. Idempotent: does nothing when `docker info` answers.
# On a bare Debian/Ubuntu host (root), installs Debian's docker.io (and debootstrap, which the
# offline image build uses) and starts dockerd in the background, waiting until it answers.
set -euo pipefail

WAIT_S="${VERIFIER_DOCKER_WAIT_S:-60}"
LOG="${VERIFIER_DOCKERD_LOG:-/var/log/verifier-dockerd.log}"

say() { echo "ensure-docker: $*" >&2; }

if docker info >/dev/null 2>&1; then
  exit 0
fi

missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
if ((${#missing[@]})); then
  if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
    say "no Docker engine answers and I can only install one as root on Debian/Ubuntu; install Docker and start it"
    exit 1
  fi
  say "installing ${missing[*]} from the distribution's packages"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [[ $(id -u) -ne 0 ]]; then
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

for ((i = 0; i < WAIT_S * 2; i++)); do
  if docker info >/dev/null 2>&1; then
    say "engine answers after $((i / 2)) s"
    exit 0
  fi
  sleep 0.5
done
say "dockerd did not answer within ${WAIT_S} s; last lines of $LOG:"
tail -n 20 "$LOG" >&2 || true
exit 1
