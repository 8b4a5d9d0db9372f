#!/usr/bin/env bash
# A Debian bookworm base image with Python 3.11, for engines that reach no image registry
# (this project's CI machines): built from Debian's packages with mmdebstrap and loaded with
# `docker import`, then passed to the Dockerfile as BASE_IMAGE. Where a registry is
# reachable, the Dockerfile's default (the official python:3.11-slim-bookworm) needs none
# of this. Skips the build when the image exists already (the engine's data root keeps it).
#
#   scripts/build-base-image.sh [IMAGE]     # default kafkalite-base:bookworm; prints IMAGE
set -euo pipefail
IMAGE=${1:-kafkalite-base:bookworm}
# One build at a time on this machine: a second session waits, then finds the image (two
# imports at once would build it twice and leave the first one untagged).
exec 9>>"${TMPDIR:-/tmp}/kafkalite-base-image.lock"
flock 9
if docker image inspect "$IMAGE" >/dev/null 2>&1; then echo "$IMAGE"; exit 0; fi
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
# minbase: Essential and Required packages (useradd among them) and apt; the Dockerfile
# installs tini itself when a base lacks it, but having it here saves an apt round trip.
mmdebstrap --variant=minbase --quiet \
  --include=python3,python3-venv,ca-certificates,tini \
  --aptopt='Acquire::Check-Valid-Until "false"' \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
  bookworm - \
  "deb $MIRROR bookworm main" "deb $MIRROR bookworm-updates main" \
  "deb $SECURITY bookworm-security main" \
  | docker import \
      --change 'ENV LANG=C.UTF-8' \
      --change 'LABEL org.kafkalite.role=base' \
      --change 'CMD ["python3"]' \
      - "$IMAGE" >/dev/null
echo "$IMAGE"
