#!/bin/sh
# The lab container's command: put the labs in the notebook folder, then serve JupyterLab
# (or, when JupyterHub spawned this container, the hub's single-user server).
set -eu
if ! [ -w "$HOME" ]; then
  HOME=/tmp/kafkalite-home  # a uid the image does not know (KAFKALITE_UID): a home of its own
  mkdir -p "$HOME"
  export HOME
fi
export SHELL=/bin/bash
NOTEBOOKS=${KAFKALITE_NOTEBOOKS:-/home/kafkalite/labs}
mkdir -p "$NOTEBOOKS"
# Labs the folder lacks are copied in; a student's own copy is never overwritten.
cp -R -n /opt/kafkalite/labs/. "$NOTEBOOKS"/ 2>/dev/null \
  || echo "note: could not copy the labs into $NOTEBOOKS (not writable by uid $(id -u))" >&2
cd "$NOTEBOOKS"
# The spark profile's standalone cluster: kafkalite.spark.session() uses it, and executors
# on the worker connect back to this container's address (not to its loopback).
if [ "${KAFKALITE_SPARK:-0}" = 1 ] && getent hosts spark-master >/dev/null; then
  export KAFKALITE_SPARK_MASTER=${KAFKALITE_SPARK_MASTER:-spark://spark-master:7077}
  SPARK_LOCAL_IP=$(hostname -i | cut -d' ' -f1)
  export SPARK_LOCAL_IP
fi
if [ -n "${JUPYTERHUB_API_TOKEN:-}" ]; then
  exec jupyterhub-singleuser --ServerApp.root_dir="$NOTEBOOKS" "$@"
fi
if [ -z "${JUPYTER_TOKEN:-}" ]; then
  # No token given: make one (an empty token would mean no authentication at all).
  JUPYTER_TOKEN=$(python -c 'import secrets; print(secrets.token_urlsafe(24))')
  export JUPYTER_TOKEN
fi
echo "JupyterLab: http://127.0.0.1:${KAFKALITE_LAB_PORT:-8888}/lab?token=$JUPYTER_TOKEN"
exec jupyter lab --ip=0.0.0.0 --port=8888 --no-browser --ServerApp.root_dir="$NOTEBOOKS" "$@"
