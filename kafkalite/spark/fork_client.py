"""Run ``python -m MODULE ARGS`` as a fork of the fork server, or as itself without one.

Spark starts each of its Python daemons (and the streaming-source runner) as
``$PYSPARK_PYTHON -m MODULE ARGS``; the ``PYSPARK_PYTHON`` script of
:func:`kafkalite.spark.session.spark_python` runs this file instead, with the standard
library only and no ``site`` (``python -I -S``: a few milliseconds), as::

    python -I -S fork_client.py PYTHON [OPTIONS] -m MODULE ARGS

It hands its standard streams, arguments, working directory and environment to the fork
server named by ``$KAFKALITE_SPARK_FORK_SERVER`` (:mod:`kafkalite.spark.fork_server`),
which forks a process that already has pyspark, pyarrow and pandas imported and runs
the module in it. This process stays as the one Spark started: it forwards the signals
Spark sends it (``destroy()`` is a SIGTERM) to that fork and exits with its exit code.
Without a fork server to reach, it becomes ``PYTHON [OPTIONS] -m MODULE ARGS`` itself.

Kept free of any import from this package: it runs before ``site`` adds the venv.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import struct
import sys
from types import FrameType

ENV = "KAFKALITE_SPARK_FORK_SERVER"
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT)


def request(command: list[str]) -> bytes:
    """What the fork server needs to run ``command`` (``PYTHON [OPTIONS] -m MODULE ARGS``)."""
    at = command.index("-m")
    payload = {
        "module": command[at + 1],
        "argv": command[at + 2 :],
        "cwd": os.getcwd(),
        "env": dict(os.environ),
    }
    data = json.dumps(payload).encode()
    return struct.pack("!I", len(data)) + data


def read_int(sock: socket.socket) -> int | None:
    data = b""
    while len(data) < 4:
        chunk = sock.recv(4 - len(data))
        if not chunk:
            return None
        data += chunk
    return int(struct.unpack("!i", data)[0])


def hand_over(path: str, command: list[str]) -> int:
    """Have the fork server run ``command`` with this process's standard streams; its
    exit code (128 + N for signal N, as a shell reports it). Raises ``OSError`` if the
    server cannot be reached or refuses before forking."""
    data = request(command)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    # A signal that comes before the fork's pid is known waits until it can be forwarded:
    # the fork may already run (and its output be read) before this reads the pid, and a
    # SIGTERM then killed this process instead of reaching the fork.
    unblocked = signal.pthread_sigmask(signal.SIG_BLOCK, FORWARDED)
    try:
        sock.connect(path)
        sent = sock.sendmsg(
            [data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("3i", 0, 1, 2))]
        )
        sock.sendall(data[sent:])
        pid = read_int(sock)
        if pid is None or pid <= 0:
            raise ConnectionError(f"kafkalite: the fork server at {path} did not fork")

        def forward(signum: int, _frame: FrameType | None) -> None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signum)

        for signum in FORWARDED:
            if signal.getsignal(signum) != signal.SIG_IGN:  # as the JVM left it: kept
                signal.signal(signum, forward)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, unblocked)  # an exec keeps the mask
    # Only the fork keeps Spark's pipes open now: the JVM sees their end when it exits.
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)
    status = read_int(sock)
    return 1 if status is None else status


def main(argv: list[str]) -> None:
    command = argv[1:]
    path = os.environ.get(ENV)
    if path and "-m" in command:
        try:
            sys.exit(hand_over(path, command))
        except OSError as error:  # no fork server (any more): run it ourselves
            print(f"kafkalite: fork server unavailable ({error}); starting Python", file=sys.stderr)
    os.execv(command[0], command)


if __name__ == "__main__":
    main(sys.argv)
