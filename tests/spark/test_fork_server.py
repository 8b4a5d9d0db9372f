"""The fork server runs ``python -m MODULE ARGS`` for the ``PYSPARK_PYTHON`` script as a
fork of a Python that has pyspark and pyarrow imported already, as if the script had run
it: the client's standard streams, arguments, working directory, environment (its
``PYTHONPATH`` included) and exit code, and Spark's signals reaching the fork. Without a
fork server the script runs Python itself. Spark's daemons run this way in every other
Spark test."""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from pyspark.sql import SparkSession

from kafkalite.spark import fork_server
from kafkalite.spark.driver import DriverProcess
from kafkalite.spark.fork_client import ENV
from kafkalite.spark.session import spark_python
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]

PROBE = """
import json, os, sys
line = sys.stdin.readline()
print(json.dumps({
    "argv": sys.argv[1:], "cwd": os.getcwd(), "stdin": line, "env": os.environ.get("PROBE"),
    "preloaded": "pyarrow" in sys.modules, "pid": os.getpid(), "ppid": os.getppid(),
}), flush=True)
if sys.argv[1:] == ["wait"]:
    sys.stdin.readline()
sys.exit(int(os.environ.get("PROBE_EXIT", "0")))
"""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    directory = tmp_path / "fork-server"
    directory.mkdir()
    path = str(directory / "server.sock")
    process = fork_server.launch(path)
    try:
        yield path, process
    finally:
        process.kill()
        process.wait(30)


def probe_env(tmp_path: Path, path: str | None, **extra: str) -> dict[str, str]:
    modules = tmp_path / "modules"
    modules.mkdir(exist_ok=True)
    (modules / "fork_probe.py").write_text(textwrap.dedent(PROBE))
    env = {k: v for k, v in os.environ.items() if k != ENV}
    env |= {"PYTHONPATH": str(modules), "PROBE": "from-the-client", **extra}
    return env | ({ENV: path} if path else {})


def run_probe(command: list[str], env: dict[str, str], cwd: Path) -> tuple[int, dict[str, object]]:
    out = subprocess.run(
        command, input=b"hello\n", env=env, cwd=cwd, capture_output=True, timeout=120, check=False
    )
    assert out.stdout, out.stderr.decode()
    return out.returncode, json.loads(out.stdout)


def test_a_module_runs_as_a_preloaded_fork_with_the_clients_streams_and_environment(
    server: tuple[str, subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    path, process = server
    env = probe_env(tmp_path, path, PROBE_EXIT="3")
    code, seen = run_probe([str(spark_python()), "-m", "fork_probe", "a b", "c"], env, tmp_path)
    assert code == 3
    assert seen["argv"] == ["a b", "c"]
    assert seen["cwd"] == str(tmp_path)
    assert seen["stdin"] == "hello\n"
    assert seen["env"] == "from-the-client"
    assert seen["preloaded"] is True
    assert seen["ppid"] == process.pid


def test_without_a_fork_server_the_script_runs_python_itself(tmp_path: Path) -> None:
    env = probe_env(tmp_path, str(tmp_path / "no-such.sock"))
    code, seen = run_probe([str(spark_python()), "-m", "fork_probe", "x"], env, tmp_path)
    assert code == 0
    assert seen["argv"] == ["x"]
    assert seen["preloaded"] is False


def test_a_signal_to_the_client_reaches_the_fork_and_its_exit_code_returns(
    server: tuple[str, subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    path, _process = server
    env = probe_env(tmp_path, path)
    client = subprocess.Popen(
        [str(spark_python()), "-m", "fork_probe", "wait"],
        env=env, cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert client.stdin is not None and client.stdout is not None
        client.stdin.write(b"hello\n")
        client.stdin.flush()
        fork = json.loads(client.stdout.readline())
        assert fork["pid"] != client.pid
        client.send_signal(signal.SIGTERM)
        assert client.wait(60) == 128 + signal.SIGTERM
        deadline = time.monotonic() + 30
        while Path(f"/proc/{fork['pid']}").exists():
            assert time.monotonic() < deadline, "the fork outlived the SIGTERM"
            time.sleep(0.05)
    finally:
        client.kill()
        client.wait(30)


# A notebook's kernel: it starts the fork server as kafkalite.spark.session does, with
# SIGINT as a kernel's child process has it (the default), holds the server's pipe, and
# outlives an interrupt, as ipykernel does.
KERNEL = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_DFL)
from kafkalite.spark import fork_server
server = fork_server.launch(sys.argv[1])
signal.signal(signal.SIGINT, lambda _signum, _frame: None)  # a kernel outlives it
print(server.pid, flush=True)
time.sleep(600)
"""


def test_interrupting_the_notebook_leaves_the_server_and_its_forks_running(
    tmp_path: Path,
) -> None:
    """Jupyter's "interrupt kernel" sends SIGINT to the kernel's process group: the JVM,
    the Python processes the JVM starts and the notebook's fork server. pyspark starts its
    JVM with SIGINT ignored and the JVM's Python processes inherit that, so a notebook's
    query outlives an interrupt; with the fork server, its streaming source died of a
    KeyboardInterrupt (a probe, 2026-11-29: a memory-sink query stopped at once, and ran
    on with fork servers off). Here a stand-in JVM child (SIGINT ignored) runs a module
    through the fork server, the kernel's group is interrupted, and the fork finishes its
    work and exits 0, and the server serves the next request."""
    path = str(tmp_path / "server.sock")
    kernel = subprocess.Popen(
        [sys.executable, "-c", KERNEL, path], stdout=subprocess.PIPE, process_group=0
    )
    try:
        assert kernel.stdout is not None
        server_pid = int(kernel.stdout.readline())
        env = probe_env(tmp_path, path)
        ours = signal.signal(signal.SIGINT, signal.SIG_IGN)  # inherited, as by the JVM's
        try:
            client = subprocess.Popen(
                [str(spark_python()), "-m", "fork_probe", "wait"],
                env=env, cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                process_group=kernel.pid,
            )  # fmt: skip
        finally:
            signal.signal(signal.SIGINT, ours)
        assert client.stdin is not None and client.stdout is not None
        client.stdin.write(b"hello\n")
        client.stdin.flush()
        fork = json.loads(client.stdout.readline())
        assert fork["ppid"] == server_pid and os.getpgid(fork["pid"]) == kernel.pid
        os.killpg(kernel.pid, signal.SIGINT)
        client.stdin.write(b"go on\n")  # the fork's second line: it reads it and ends
        client.stdin.flush()
        assert client.wait(60) == 0, "the fork died of the interrupt"
        code, seen = run_probe([str(spark_python()), "-m", "fork_probe", "x"], env, tmp_path)
        assert (code, seen["ppid"]) == (0, server_pid), "the server died of the interrupt"
    finally:
        os.killpg(kernel.pid, signal.SIGKILL)
        kernel.wait(30)


def test_a_signal_that_comes_before_the_forks_pid_still_reaches_the_fork(tmp_path: Path) -> None:
    """The fork can run, and its output be read, before the client has read its pid: a
    SIGTERM then killed the client instead of reaching the fork (CI, 06:18). A stand-in
    server here holds the pid back while the signal comes."""
    path = str(tmp_path / "server.sock")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    fork = subprocess.Popen(["sleep", "60"])  # what the fork server would have forked
    client = subprocess.Popen(
        [sys.executable, "-c", "import sys; from kafkalite.spark.fork_client import main; "
         "main(['python', '-m', 'fork_probe'])"],
        env={**os.environ, ENV: path}, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        listener.settimeout(60)
        conn, _ = listener.accept()
        with conn:
            _request, fds = fork_server.read_request(conn)
            for fd in fds:
                os.close(fd)
            client.send_signal(signal.SIGTERM)
            time.sleep(0.3)
            assert client.poll() is None, "the client died of a signal meant for the fork"
            conn.sendall(struct.pack("!i", fork.pid))
            assert fork.wait(30) == -signal.SIGTERM
            conn.sendall(struct.pack("!i", 128 + signal.SIGTERM))
            assert client.wait(30) == 128 + signal.SIGTERM
    finally:
        listener.close()
        for process in (fork, client):
            process.kill()
            process.wait(30)


def test_the_server_stops_when_its_driver_closes_the_pipe(
    server: tuple[str, subprocess.Popen[bytes]],
) -> None:
    path, process = server
    assert process.stdin is not None
    process.stdin.close()
    assert process.wait(60) == 0
    assert not os.path.exists(os.path.dirname(path)), "the socket's directory was left"


def test_a_temporary_directory_too_deep_for_a_socket_means_no_fork_server() -> None:
    """A grader's sandbox puts TMPDIR deep in its work directory: binding there failed with
    ``AF_UNIX path too long`` and took the student's SparkSession down with it."""
    assert (
        fork_server.socket_path("/tmp/kafkalite-fork-abc") == "/tmp/kafkalite-fork-abc/server.sock"
    )
    assert fork_server.socket_path("/tmp/" + "d" * 120) is None


def command_line(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except psutil.Error:  # exited meanwhile (or a zombie: no command line left)
        return []


def test_the_session_jvm_looks_up_data_sources_in_a_fork(spark: SparkSession) -> None:
    """Once per session the driver's JVM starts a Python daemon that looks for installed
    data sources (before the first ``format("kafkalite")``). It runs the driver's Python
    (``PYSPARK_DRIVER_PYTHON``), which is the script too: the daemon is a fork of the fork
    server, not a Python that imports pyspark for 2-3 s."""
    spark.range(1).collect()
    jvm = psutil.Process(spark.sparkContext._gateway.proc.pid)  # type: ignore[union-attr]
    lookups = [
        cmd
        for cmd in map(command_line, jvm.children(recursive=True))
        if "pyspark.sql.worker.lookup_data_sources" in cmd
    ]
    assert lookups, "no data-source lookup daemon under the driver's JVM"
    assert all(any(a.endswith("fork_client.py") for a in cmd) for cmd in lookups), lookups


DRIVER = """
import time
import kafkalite.spark
spark = kafkalite.spark.session("driver-probe")
spark.sparkContext.parallelize([1, 2], 2).map(lambda x: x).collect()  # Python workers
print("ready", flush=True)
time.sleep(600)
"""


def test_a_driver_started_beside_a_session_has_a_fork_server_of_its_own(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Lab 09 makes a SparkSession in the notebook, then starts the pipeline's driver as a
    process to kill. That driver's Python workers must be forks of a server in its own
    process group, which the kill reaches, not of the notebook's."""
    assert os.environ.get(ENV), "this process's session has a fork server"
    ours = [
        c
        for c in psutil.Process().children()
        if "kafkalite.spark.fork_server" in " ".join(command_line(c))
    ]
    assert len(ours) == 1, ours
    before = {c.pid for c in ours[0].children()}
    (tmp_path / "driver_probe.py").write_text(DRIVER)
    driver = DriverProcess("driver_probe", [], log_dir=tmp_path / "logs", cwd=tmp_path)
    process = driver.start()
    try:
        wait_for(lambda: "ready" in driver.log(), 300, "the driver's first Python tasks")
        group = [p for p in psutil.process_iter() if process_group(p) == process.pid]
        assert any("kafkalite.spark.fork_server" in " ".join(command_line(p)) for p in group)
        assert {c.pid for c in ours[0].children()} <= before, "forks of this process's server"
    finally:
        driver.kill()


def process_group(process: psutil.Process) -> int | None:
    try:
        return os.getpgid(process.pid)
    except ProcessLookupError:
        return None
