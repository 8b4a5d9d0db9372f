#!/usr/bin/env bash
# System tools the test suite uses beyond Python packages, from Debian's packages: kcat (a
# librdkafka CLI), Chromium with its driver (the dashboard's browser test) and tmux (the
# terminal `kafkalite status --watch` is tested in). Installed
# only when running as root with apt available; otherwise the tests that need them are
# skipped and say why.
set -euo pipefail
missing=()
command -v kcat >/dev/null 2>&1 || missing+=(kcat)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${missing[*]} from Debian packages..."
  apt-get update -qq >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 \
    || echo "warning: could not install ${missing[*]}; the tests that need them will be skipped" >&2
else
  echo "note: ${missing[*]} not installed and cannot be installed here (not root or no apt);" \
       "the tests that need them will be skipped" >&2
fi
