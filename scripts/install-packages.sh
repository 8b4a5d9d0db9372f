#!/usr/bin/env bash
# The venv and its Python packages (requirements.txt, then this project, editable), installed
# by uv from PyPI: with its packages in uv's cache (~/.cache/uv, filled by the first install
# on the machine) uv resolves and links the ~170 packages (1.4 GB) in about a second, where
# pip took ~45 s to resolve and unpack them and recreated pip in every venv. It is a fresh
# clone's `make up` within a minute.
#
# uv tries the cache alone first (--offline) and goes to PyPI only for what is missing: a
# registry here may answer without caching headers, and then an online uv revalidates
# every index page (~8 s) and rebuilds pyspark, which PyPI has only as a source archive,
# from a newly downloaded archive each time (~35 s of CPU). Offline, uv picks only versions
# its cache has, which the pins of requirements.txt fix for the packages we name.
#
# uv does not byte-compile what it installs (pip did unless told --no-compile: half its CPU,
# mostly for modules no lab imports); Python compiles a module when first imported.
#
# Usage: install-packages.sh PYTHON VENV
set -euo pipefail
python="$1"
venv="$2"
uv_version=0.13.8  # uv itself, pinned like requirements.txt's packages
if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv --without-pip "$venv"  # no pip copied in (ensurepip: ~5 s): uv installs
fi
if [ "$("$venv/bin/uv" --version 2>/dev/null)" != "uv $uv_version" ]; then
  if [ -x "$venv/bin/pip" ]; then  # a venv made before uv installed into it
    "$venv/bin/pip" install --quiet "uv==$uv_version"
  elif ! "$python" -m pip --python "$venv/bin/python" install --quiet "uv==$uv_version"; then
    # No pip (>= 22.3, for --python) beside this Python: the venv gets pip of its own.
    "$python" -m venv "$venv"
    "$venv/bin/pip" install --quiet "uv==$uv_version"
  fi
fi
install=("$venv/bin/uv" pip install --quiet --python "$venv/bin/python")
if ! "${install[@]}" --offline -r requirements.txt 2>/dev/null; then
  echo "installing the packages uv's cache does not have from PyPI..."
  "${install[@]}" -r requirements.txt
fi
# --no-build-isolation: built with requirements.txt's setuptools, not a build environment of
# its own (as the Dockerfile pins it).
"${install[@]}" --offline --no-deps --no-build-isolation -e .
