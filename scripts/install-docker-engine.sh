#!/usr/bin/env bash
# The container engine the `containers` tests (and a course on this kind of machine) use:
# Debian's docker.io engine (20.10), docker-compose (1.29: the v2 plugin is not packaged)
# and mmdebstrap (builds the base image when no image registry is reachable). Installed only
# as root with apt; elsewhere the tests find no engine and are skipped with the reason.
# Idempotent and quiet when everything is there already; it never starts the engine
# (scripts/docker-engine.sh does, with its own socket and data root).
set -euo pipefail
missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != "0" ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "note: ${missing[*]} not installed and cannot be installed here (not root or no apt)" >&2
  exit 1
fi
echo "installing ${missing[*]} from Debian packages..." >&2
apt-get update -qq >/dev/null 2>&1 || true
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends \
  "${missing[@]}" iptables >/dev/null
