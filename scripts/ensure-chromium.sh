#!/usr/bin/env bash
# Make a headless Chromium available for the bench report's browser test
# (tests/bench/test_report_browser.py opens the report page in it through Playwright).
# Idempotent: does nothing when VERIFIER_CHROMIUM names an executable or `chromium` is on PATH.
#
# On a bare Debian/Ubuntu host (root), installs the distribution's `chromium` package; Playwright
# (the dev extra) drives that browser, so nothing is downloaded from Playwright's CDN.
# VERIFIER_SKIP_BROWSER=1 skips this (and the test skips itself).
set -euo pipefail

say() { echo "ensure-chromium: $*" >&2; }

if [[ "${VERIFIER_SKIP_BROWSER:-0}" == "1" ]]; then
  exit 0
fi
if [[ -n "${VERIFIER_CHROMIUM:-}" && -x "${VERIFIER_CHROMIUM}" ]]; then
  exit 0
fi
for name in chromium chromium-browser; do
  if command -v "$name" >/dev/null 2>&1; then
    exit 0
  fi
done
if [[ $(id -u) -ne 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
  say "no Chromium found, and I can only install one as root on Debian/Ubuntu; install chromium" \
    "(or set VERIFIER_CHROMIUM to a Chromium/Chrome executable)"
  exit 1
fi
say "installing chromium from the distribution's packages"
apt-get update -qq
NEEDRESTART_SUSPEND=1 DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
command -v chromium >/dev/null 2>&1 || { say "apt-get installed chromium, but it is not on PATH"; exit 1; }
say "$(chromium --version 2>/dev/null || echo chromium installed)"
