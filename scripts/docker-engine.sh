#!/usr/bin/env bash
# A Docker engine of the project's own, for machines where none runs (this project's CI
# machines: only the client is installed). Debian's dockerd with its own socket, state
# and containerd namespace, so it never meets another engine on the machine; its data root
# is outside every clone, so the base image and the build cache survive between runs and
# are shared by every clone.
#
#   scripts/docker-engine.sh start   # prints the DOCKER_HOST to use; starts dockerd if needed
#   scripts/docker-engine.sh stop    # stops the engine this script started
#
# Needs root (dockerd does); scripts/install-docker-engine.sh installs it.
set -euo pipefail
ROOT=${KAFKALITE_DOCKER_ROOT:-/var/lib/kafkalite-docker}
RUN=${KAFKALITE_DOCKER_RUN:-/run/kafkalite-docker}
SOCKET="$RUN/docker.sock"
HOST="unix://$SOCKET"

answers() { DOCKER_HOST="$HOST" timeout 10 docker version >/dev/null 2>&1; }

# Under cgroup v1 every container sits in the cgroup /docker, which competes for the CPU
# with each process outside it at equal weight: on a machine busy with other work, all the
# containers together would get one process's share (the stack runs about ten busy
# processes). Weigh them as the processes they hold.
weigh_containers() {
  local group=/sys/fs/cgroup/cpu/docker
  if [ -d /sys/fs/cgroup/cpu ] && { [ -d "$group" ] || mkdir "$group" 2>/dev/null; }; then
    echo "${KAFKALITE_DOCKER_CPU_SHARES:-8192}" > "$group/cpu.shares" 2>/dev/null || true
  fi
}

# One start or stop at a time (two test sessions starting at once would otherwise launch
# two dockerd on one pid file, and the loser would report that no engine can start).
mkdir -p "$RUN"
exec 9>>"$RUN/engine.lock"
flock 9

case "${1:-start}" in
start)
  if answers; then weigh_containers; echo "$HOST"; exit 0; fi
  command -v dockerd >/dev/null || { echo "dockerd is not installed" >&2; exit 1; }
  mkdir -p "$ROOT"
  # overlay2 works on these machines' kernels; DOCKER_STORAGE_DRIVER=vfs is the fallback.
  # 9>&-: the engine must not hold the start lock for its whole life.
  setsid dockerd \
    --data-root "$ROOT" --exec-root "$RUN/exec" --pidfile "$RUN/dockerd.pid" \
    -H "$HOST" --containerd-namespace kafkalite --containerd-plugins-namespace kafkalite-plugins \
    ${DOCKER_STORAGE_DRIVER:+--storage-driver "$DOCKER_STORAGE_DRIVER"} \
    >"$RUN/dockerd.log" 2>&1 </dev/null 9>&- &
  for _ in $(seq 1 150); do
    if answers; then weigh_containers; echo "$HOST"; exit 0; fi
    if ! kill -0 $! 2>/dev/null; then break; fi
    sleep 0.2
  done
  echo "dockerd did not start; the end of $RUN/dockerd.log:" >&2
  tail -n 15 "$RUN/dockerd.log" >&2
  exit 1
  ;;
stop)
  [ -f "$RUN/dockerd.pid" ] || exit 0
  pid=$(cat "$RUN/dockerd.pid")
  kill "$pid" 2>/dev/null || exit 0
  for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 0.2; done
  echo "dockerd ($pid) did not stop in 30 s" >&2
  exit 1
  ;;
*)
  echo "usage: $0 start|stop" >&2
  exit 2
  ;;
esac
