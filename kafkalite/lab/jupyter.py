"""JupyterLab for the labs, run in the background beside the cluster it teaches with.

``kafkalite lab`` starts JupyterLab on ``labs/`` with ``KAFKALITE_DIR`` pointing at the
cluster, so every notebook's ``kafkalite.lab.connect()`` finds it. The server listens on
loopback with a random token unless told otherwise; its pid, address and token are kept in
``<cluster dir>/jupyter.json`` and its output in ``<cluster dir>/jupyter.log``, so
``kafkalite down`` (from any shell) stops it, and its kernels, with the cluster.

Each start opens a clean workspace (JupyterLab's record of the open tabs, kept in
``<cluster dir>/jupyter-workspaces/``): notebooks left open last time are not reopened,
so no kernel starts before the student opens a notebook. What else JupyterLab and its
kernels write for themselves (runtime files, trusted notebooks' signatures, IPython's
history) goes to the cluster's folder too, not to the home folder (``HOME_DIRS``).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil

from kafkalite.cluster import ClusterError
from kafkalite.cluster.spec import check_port_free
from kafkalite.lab.connection import ENV_DIR, LAB_BASE_PORT, LAB_BROKERS, open_cluster

STATE_FILE = "jupyter.json"
LOG_FILE = "jupyter.log"
WORKSPACES = "jupyter-workspaces"
HOME_DIRS = {
    "JUPYTER_RUNTIME_DIR": "jupyter-runtime",
    "JUPYTER_DATA_DIR": "jupyter-data",
    "IPYTHONDIR": "ipython",
}
"""Where Jupyter and IPython would write in ``~/.local/share/jupyter`` and ``~/.ipython``,
under the cluster's folder instead (the user's own settings, ``~/.jupyter``, are kept)."""
READY_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 10.0


@dataclass(slots=True)
class JupyterServer:
    pid: int
    ip: str
    port: int
    token: str
    root_dir: str
    probe: str = "/api/status"
    """A page the server answers once it is up (Voilà has no ``/api/status``)."""

    @property
    def base_url(self) -> str:
        host = self.ip if self.ip not in ("0.0.0.0", "::", "") else socket.gethostname()
        return f"http://{host}:{self.port}"

    @property
    def url(self) -> str:
        """What a student opens: JupyterLab, logged in by the token."""
        return f"{self.base_url}/lab?token={self.token}"

    def reachable(self, timeout_s: float = 2.0) -> bool:
        """The server answers its API with this token (what a browser would need)."""
        host = "127.0.0.1" if self.ip in ("0.0.0.0", "") else self.ip
        request = urllib.request.Request(
            f"http://{host}:{self.port}{self.probe}",
            headers={"Authorization": f"token {self.token}"},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout_s) as response:
                return bool(response.status == 200)
        except (OSError, urllib.error.URLError):
            return False

    def process(self) -> psutil.Process | None:
        try:
            process = psutil.Process(self.pid)
        except psutil.NoSuchProcess:
            return None
        if process.status() == psutil.STATUS_ZOMBIE:
            process.wait(0)
            return None
        return process


def load(cluster_dir: Path, state_file: str = STATE_FILE) -> JupyterServer | None:
    """The server recorded in ``cluster_dir``, if its process still runs."""
    path = cluster_dir / state_file
    if not path.exists():
        return None
    try:
        server = JupyterServer(**json.loads(path.read_text()))
    except (ValueError, TypeError):
        return None
    return server if server.process() is not None else None


def start(
    cluster_dir: Path,
    labs_dir: Path,
    ip: str = "127.0.0.1",
    port: int = 8888,
    ready_timeout_s: float = READY_TIMEOUT_S,
) -> tuple[JupyterServer, bool]:
    """Start JupyterLab on ``labs_dir`` (or reuse the one already serving this cluster)
    and wait until it answers; returns the server and whether it was started now."""
    running = load(cluster_dir)
    if running is not None and running.reachable():
        return running, False
    if running is not None:
        stop(cluster_dir)
    if not labs_dir.is_dir():
        raise ClusterError(f"no labs folder at {labs_dir}")
    check_port_free(ip if ip not in ("0.0.0.0", "") else "0.0.0.0", port)
    token = new_token()
    workspaces = cluster_dir / WORKSPACES
    shutil.rmtree(workspaces, ignore_errors=True)
    workspaces.mkdir(parents=True)
    command = [
        sys.executable,
        "-m",
        "kafkalite.lab.jupyterlab_process",
        "--no-browser",
        f"--ServerApp.ip={ip}",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={labs_dir.resolve()}",
        f"--LabApp.workspaces_dir={workspaces.resolve()}",
        # a classroom machine may have no internet: never ask for news or updates
        "--LabApp.news_url=",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # course containers often run as root
    server = JupyterServer(0, ip, port, token, str(labs_dir.resolve()))
    return launch(cluster_dir, command, server, STATE_FILE, LOG_FILE, ready_timeout_s), True


def new_token() -> str:
    return secrets.token_hex(24)


def launch(
    cluster_dir: Path,
    command: list[str],
    server: JupyterServer,
    state_file: str,
    log_file: str,
    ready_timeout_s: float = READY_TIMEOUT_S,
    name: str = "JupyterLab",
) -> JupyterServer:
    """Run ``command`` (a Jupyter server: JupyterLab, or Voilà for ``kafkalite demo``) in
    the background with ``KAFKALITE_DIR`` set to the cluster, record it in ``state_file``
    and wait until it answers ``server.probe``; returns ``server`` with its pid."""
    env = {**os.environ, ENV_DIR: str(cluster_dir.resolve())}
    env.update({name: str((cluster_dir / folder).resolve()) for name, folder in HOME_DIRS.items()})
    cluster_dir.mkdir(parents=True, exist_ok=True)
    with (cluster_dir / log_file).open("ab") as log:
        process = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,  # outlives the command that started it, as the brokers do
        )
    server.pid = process.pid
    (cluster_dir / state_file).write_text(json.dumps(asdict(server), indent=2) + "\n")
    deadline = time.monotonic() + ready_timeout_s
    while not server.reachable(timeout_s=1.0):
        if process.poll() is not None or time.monotonic() > deadline:
            stop(cluster_dir, state_file=state_file)
            raise ClusterError(
                f"{name} did not start; see {cluster_dir / log_file}:\n"
                + _tail(cluster_dir / log_file)
            )
        time.sleep(0.1)
    return server


def stop(
    cluster_dir: Path, timeout_s: float = STOP_TIMEOUT_S, state_file: str = STATE_FILE
) -> bool:
    """Stop the server recorded in ``state_file`` (JupyterLab by default) and every kernel
    it started; True if one was running. SIGTERM lets it shut its kernels down; anything
    left is killed."""
    path = cluster_dir / state_file
    server = load(cluster_dir, state_file)
    if server is None:
        path.unlink(missing_ok=True)
        return False
    process = server.process()
    if process is not None:
        children = process.children(recursive=True)
        process.terminate()
        _, alive = psutil.wait_procs([process, *children], timeout=timeout_s)
        for leftover in alive:
            with contextlib.suppress(psutil.NoSuchProcess):
                leftover.kill()
        psutil.wait_procs(alive, timeout=5)
    path.unlink(missing_ok=True)
    return True


def open_lab(
    cluster_dir: Path,
    labs_dir: Path,
    brokers: int = LAB_BROKERS,
    kafka_port: int = LAB_BASE_PORT,
    configs: dict[str, str] | None = None,
    ip: str = "127.0.0.1",
    port: int = 8888,
    stop_command: str = "kafkalite down",
) -> str:
    """What ``kafkalite lab`` does: start or reuse the cluster, then JupyterLab on it;
    returns what to tell the student (the URL with its token, the bootstrap servers, and
    ``stop_command``, written for the student's shell)."""
    cluster = open_cluster(cluster_dir, brokers, kafka_port, configs)
    server, started = start(cluster_dir, labs_dir, ip, port)
    states = ", ".join(f"{b}: {s.value}" for b, s in cluster.broker_states().items())
    return "\n".join(
        [
            f"JupyterLab {'started' if started else 'already running'} on {server.root_dir}",
            f"  open:      {server.url}",
            f"  brokers:   {cluster.bootstrap_servers}  ({states})",
            f"  cluster:   {cluster_dir}  (log: {cluster_dir / LOG_FILE})",
            f"  stop both: {stop_command}",
        ]
    )


def _tail(path: Path, lines: int = 8) -> str:
    if not path.exists():
        return "(no log)"
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
