"""One preloaded Python from which Spark's Python daemons are forked.

Spark (local mode) starts a Python daemon per kind of Python work: one per data-source
step (lookup, create, plan, write, commit), one for the tasks' Python code, and a
streaming-source runner per query. Each is a fresh ``python -m ...`` that imports pyspark
and, in the processes it forks, pyarrow, pandas and the Kafka client: about a second of
CPU each, one after another in a query's first micro-batch, which after a driver restart
was most of the time to the first committed batch; and each kept its own copy of those
modules (over a gigabyte of Python processes for one lab pipeline).

The fork server imports all of that once, beside the starting JVM, and forks a process
per request from the ``PYSPARK_PYTHON`` script (:mod:`kafkalite.spark.fork_client`),
which passes its standard streams, arguments, working directory and environment: the
fork becomes the daemon, its workers are forks of it, and they all share the preloaded
modules' pages. A fork of a process with threads keeps only the forking thread: pyarrow's
(jemalloc's background thread, its thread pools) and OpenBLAS's are made fork-safe by
their own ``pthread_atfork`` handlers, the way ``multiprocessing``'s fork start method
relies on. The server runs until its standard input (a pipe from the driver) closes, so
it ends with the driver however the driver ends; forks run on until Spark stops them.

Protocol, over a Unix socket: the client sends a 4-byte length and a JSON request
(``module``, ``argv``, ``cwd``, ``env``) with its descriptors 0, 1 and 2 attached
(``SCM_RIGHTS``); the server answers with the fork's process id, then, when the fork
exits, its exit code (128 + N if signal N ended it), each a 4-byte signed integer.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import runpy
import selectors
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import traceback
import warnings
from functools import cache
from pathlib import Path
from typing import Any

# What Spark's Python processes import, in the order they would (pyspark's worker modules
# import pyarrow and pandas; ``pa.array`` of a list imports pandas if it is not yet).
PRELOAD = (
    "pyspark.daemon",
    "pyspark.worker",
    "pyspark.sql.worker.lookup_data_sources",
    "pyspark.sql.worker.create_data_source",
    "pyspark.sql.worker.plan_data_source_read",
    "pyspark.sql.worker.write_into_data_source",
    "pyspark.sql.worker.commit_data_source_write",
    "pyspark.sql.streaming.python_streaming_source_runner",
    "pyarrow",
    "pandas",
    "confluent_kafka",
    "kafkalite.spark.data_source",
    "kafkalite.spark.source_runner",
)
MAX_REQUEST = 1 << 20


def preload() -> None:
    for name in PRELOAD:
        importlib.import_module(name)
    sys.stdout.flush()
    sys.stderr.flush()


def read_request(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """A client's request and the descriptors it sent with it."""
    fd_size = struct.calcsize("3i")
    data, ancillary, _flags, _address = conn.recvmsg(65536, socket.CMSG_SPACE(fd_size))
    fds: list[int] = []
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            count = len(payload) // struct.calcsize("i")
            fds += struct.unpack(f"{count}i", payload[: count * struct.calcsize("i")])
    try:
        return _read_payload(conn, data), fds
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise


def _read_payload(conn: socket.socket, data: bytes) -> dict[str, Any]:
    while len(data) < 4:
        data += conn.recv(4 - len(data)) or b"\0" * 4  # a closed client fails below
    (size,) = struct.unpack("!I", data[:4])
    if size > MAX_REQUEST:
        raise ValueError(f"request of {size} bytes")
    while len(data) < 4 + size:
        chunk = conn.recv(4 + size - len(data))
        if not chunk:
            raise ConnectionError("the client closed before its request ended")
        data += chunk
    result: dict[str, Any] = json.loads(data[4:])
    return result


def run_fork(request: dict[str, Any], fds: list[int]) -> None:
    """In the fork: become ``python -m MODULE ARGV`` with the client's streams,
    directory and environment (and its ``PYTHONPATH`` ahead of the preloaded path), as
    if started so; never returns."""
    code = 1
    try:
        for target, fd in enumerate(fds[:3]):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        sys.path[:1] = [request["cwd"], *(p for p in paths if p not in sys.path)]
        if os.environ.get("PYTHONUNBUFFERED"):
            for stream in (sys.stdout, sys.stderr):
                if isinstance(stream, io.TextIOWrapper):
                    stream.reconfigure(line_buffering=True, write_through=True)
        sys.argv = ["", *request["argv"]]
        # Run again as __main__, though preloaded: what ``python -m`` does, minus imports.
        warnings.filterwarnings("ignore", ".*found in sys.modules", RuntimeWarning, "runpy")
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 1
    except BaseException:  # reported as the process would report it
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def exit_code(status: int) -> int:
    return 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


class ForkServer:
    """The server's state: its socket, and the connection of each fork's client (told
    the fork's exit code when it is reaped)."""

    def __init__(self, listener: socket.socket) -> None:
        self.path = listener.getsockname()
        self.listener = listener
        self.forks: dict[int, socket.socket] = {}
        self.wake_read, self.wake_write = os.pipe()
        self.running = True

    def serve(self) -> None:
        """Preload (clients wait in the socket's backlog meanwhile), then fork one
        process per request until standard input closes; then remove the socket and
        its directory."""
        # pyspark starts its JVM with SIGINT ignored, and the Python processes the JVM
        # starts inherit that: Jupyter's "interrupt kernel" (SIGINT to the kernel's
        # process group, which holds the JVM) leaves a notebook's queries running. This
        # server and its forks stand in for those processes, and are in that group too.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        preload()
        os.set_blocking(self.wake_write, False)
        signal.set_wakeup_fd(self.wake_write)
        signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)
        selector = selectors.DefaultSelector()
        selector.register(self.listener, selectors.EVENT_READ, self.accept)
        selector.register(self.wake_read, selectors.EVENT_READ, self.reap)
        selector.register(sys.stdin, selectors.EVENT_READ, self.check_driver)
        with selector:
            while self.running:
                for key, _events in selector.select():
                    key.data()
        self.listener.close()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)
        with contextlib.suppress(OSError):  # not if something else was put there
            os.rmdir(os.path.dirname(self.path))

    def check_driver(self) -> None:
        """Stop at the end of standard input: the driver that started this is gone."""
        self.running = bool(os.read(sys.stdin.fileno(), 4096))

    def reap(self) -> None:
        os.read(self.wake_read, 4096)
        while self.forks:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                return
            client = self.forks.pop(pid, None)
            if client is not None:
                with contextlib.suppress(OSError):
                    client.sendall(struct.pack("!i", exit_code(status)))
                client.close()

    def accept(self) -> None:
        conn, _ = self.listener.accept()
        try:
            request, fds = read_request(conn)
        except (OSError, ValueError) as error:
            print(f"kafkalite fork server: bad request: {error}", file=sys.stderr)
            conn.close()
            return
        pid = os.fork()
        if pid == 0:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            for sock in (self.listener, conn, *self.forks.values()):
                sock.close()
            os.close(self.wake_read)
            os.close(self.wake_write)
            run_fork(request, fds)
        for fd in fds:
            os.close(fd)
        conn.sendall(struct.pack("!i", pid))
        self.forks[pid] = conn


def launch(path: str) -> subprocess.Popen[bytes]:
    """A fork server listening at ``path``, running while the returned process's
    ``stdin`` (a pipe) stays open. The directory ``path`` is in is the server's own: it
    removes it with the socket when it ends (every SparkSession of a course made one in
    the temporary directory, left there). The socket is bound and listening on return (the
    server inherits it): a client never finds it missing, and waits in its backlog while
    the server preloads; if the server dies, connecting fails and clients start Python
    themselves. It runs with ``PYTHONHASHSEED=0``, as pyspark starts its workers (string
    hashes must agree across them for hash partitioning)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(path)
        listener.listen(64)
        return subprocess.Popen(
            [sys.executable, "-m", __name__, str(listener.fileno())],
            stdin=subprocess.PIPE,
            pass_fds=[listener.fileno()],
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )


SUN_PATH_MAX = 107
"""The longest path a Unix socket can be bound to (``sun_path`` holds 108 bytes, NUL last)."""


def socket_path(directory: str) -> str | None:
    """The fork server's socket in ``directory``, or None if that path is too long to
    bind (a temporary directory deep in a grader's sandbox: ``AF_UNIX path too long``)."""
    path = str(Path(directory) / "server.sock")
    return path if len(os.fsencode(path)) <= SUN_PATH_MAX else None


@cache
def start() -> str:
    """This process's fork server (started once, a child in its process group, which
    stops when this process ends: the cache holds its pipe) and its socket's path, for
    :data:`~kafkalite.spark.fork_client.ENV`; "" (no fork server: each of Spark's Python
    processes starts Python itself) where the temporary directory's path is too long for
    a socket."""
    directory = tempfile.mkdtemp(prefix="kafkalite-fork-")
    path = socket_path(directory)
    if path is None:
        os.rmdir(directory)
        return ""
    _servers.append(launch(path))
    return path


_servers: list[subprocess.Popen[bytes]] = []


if __name__ == "__main__":
    ForkServer(socket.socket(fileno=int(sys.argv[1]))).serve()
