"""Spark's streaming-source runner, connected back to the JVM before it imports anything.

For each streaming query on a Python source, Spark starts one Python process that plans
the micro-batches (``python -m pyspark.sql.streaming.python_streaming_source_runner``),
and gives it 10 s to connect back (fixed in Spark 4's ``PythonWorkerFactory``: not a
setting). That module imports pyspark, pyarrow and pandas before it connects; on a busy
two-core machine (a lab room's, or the test suite's) this alone can take longer, and the
query dies with "Python worker failed to connect back". Spark's other Python workers are
forked from daemons and have no such limit.

``kafkalite.spark.session.spark_python()`` is therefore the ``PYSPARK_PYTHON`` that
``session()`` sets: a shell script that starts this module instead of that runner (and
the same Python for every other worker). This module connects and authenticates the way
the runner's own ``get_sock_file_to_executor`` does, with the standard library only,
sends its process id, then imports the runner and hands it the connection. After the
process id the JVM waits without a time limit, so the imports may take as long as the
machine needs.
"""

from __future__ import annotations

import importlib
import os
import socket
import struct
from typing import BinaryIO, cast

from kafkalite.spark.session import RUNNER


def _write_int(value: int, stream: BinaryIO) -> None:
    stream.write(struct.pack("!i", value))


def _read_int(stream: BinaryIO) -> int:
    data = stream.read(4)
    if len(data) < 4:
        raise ConnectionError("kafkalite: the JVM closed the connection during authentication")
    return int(struct.unpack("!i", data)[0])


def connect(environ: dict[str, str] | None = None) -> tuple[BinaryIO, socket.socket]:
    """Connect to the JVM that started this process (``pyspark.util.local_connect_and_auth``:
    a Unix socket without a secret, or loopback TCP authenticated with the secret)."""
    env = dict(os.environ) if environ is None else environ
    timeout = int(env.get("SPARK_AUTH_SOCKET_TIMEOUT", "15"))
    buffer = int(env.get("SPARK_BUFFER_SIZE", "65536"))
    secret = env.get("PYTHON_WORKER_FACTORY_SECRET")
    path = env.get("PYTHON_WORKER_FACTORY_SOCK_PATH")
    if path and secret is None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        sock.connect(path)
        return cast(BinaryIO, sock.makefile("rwb", buffer)), sock
    if secret is None:
        raise ConnectionError("kafkalite: no PYTHON_WORKER_FACTORY_SECRET (not started by Spark?)")
    host = "::1" if env.get("SPARK_PREFER_IPV6", "false").lower() == "true" else "127.0.0.1"
    sock = socket.create_connection((host, int(env["PYTHON_WORKER_FACTORY_PORT"])), timeout)
    stream = cast(BinaryIO, sock.makefile("rwb", buffer))
    token = secret.encode("utf-8")
    _write_int(len(token), stream)
    stream.write(token)
    stream.flush()
    if stream.read(_read_int(stream)) != b"ok":
        sock.close()
        raise ConnectionError("kafkalite: the JVM refused this worker's secret")
    return stream, sock


def main() -> None:
    stream, sock = connect()
    sock.settimeout(None)  # what the runner itself asks for
    _write_int(os.getpid(), stream)
    stream.flush()
    runner = importlib.import_module(RUNNER)
    try:
        runner.main(stream, stream)
    finally:
        stream.close()


if __name__ == "__main__":
    main()
