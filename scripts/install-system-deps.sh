#!/usr/bin/env bash
# System tools the test suite uses beyond Python packages: kcat (a librdkafka CLI) from
# Debian's packages. Installed only when running as root with apt available; otherwise the
# tests that need kcat are skipped and say why.
set -euo pipefail
if command -v kcat >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing kcat from Debian packages..."
  apt-get update -qq >/dev/null 2>&1 || true
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kcat >/dev/null 2>&1 \
    || echo "warning: could not install kcat; kcat tests will be skipped" >&2
else
  echo "note: kcat is not installed and cannot be installed here (not root or no apt);" \
       "kcat tests will be skipped" >&2
fi
