"""The ``PYSPARK_PYTHON`` of ``kafkalite.spark`` starts Spark's streaming-source runner so
that it connects back before its imports: here a socket plays the JVM's side (Spark's
``PythonWorkerFactory``: accept, check the secret, read the process id). While the
runner waits for the JVM's answer to its secret, it has not loaded pyarrow yet; the rest
of the protocol is Spark's own, run by every streaming query in the other tests."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from kafkalite.spark.fork_client import ENV as FORK_SERVER_ENV
from kafkalite.spark.session import RUNNER, spark_python

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


def read_exactly(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        assert chunk, "the runner closed the connection"
        data += chunk
    return data


def read_int(conn: socket.socket) -> int:
    return int(struct.unpack("!i", read_exactly(conn, 4))[0])


def test_the_runner_connects_and_authenticates_before_it_imports_pyarrow() -> None:
    secret = "s3cret"
    with socket.create_server(("127.0.0.1", 0)) as server:
        server.settimeout(60)
        env = {
            **{k: v for k, v in os.environ.items() if k != FORK_SERVER_ENV},  # the runner itself
            "PYTHON_WORKER_FACTORY_PORT": str(server.getsockname()[1]),
            "PYTHON_WORKER_FACTORY_SECRET": secret,
        }
        runner = subprocess.Popen(
            [spark_python(), "-m", RUNNER], env=env, stderr=subprocess.DEVNULL
        )
        try:
            conn, _ = server.accept()
            with conn:
                conn.settimeout(60)
                assert read_exactly(conn, read_int(conn)) == secret.encode()
                maps = Path(f"/proc/{runner.pid}/maps").read_text()
                assert "arrow" not in maps, "pyarrow was loaded before the runner connected"
                conn.sendall(struct.pack("!i", 2) + b"ok")
                assert read_int(conn) == runner.pid
        finally:
            runner.kill()
            runner.wait(30)


def test_other_workers_run_the_python_itself() -> None:
    out = subprocess.run(
        [spark_python(), "-c", "import sys; print(sys.executable)"],
        capture_output=True,
        check=True,
        timeout=60,
    )
    assert out.stdout.decode().strip() == sys.executable
