"""A Docker engine for the container tests, or the reason there is none.

Order of preference: the engine ``DOCKER_HOST`` names, the machine's own engine at the
default socket, and else the project's own (``scripts/docker-engine.sh``: Debian's dockerd
with its own socket and a data root outside every clone, installed by
``scripts/install-docker-engine.sh``). A test session holds a shared lock on the engine
while it uses it; the last session out stops an engine the script started, so concurrent
sessions (a developer's and CI's) never pull it from under each other.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import docker
import docker.errors

REPO = Path(__file__).resolve().parents[2]
OWN_RUN_DIR = Path(os.environ.get("KAFKALITE_DOCKER_RUN", "/run/kafkalite-docker"))
OWN_HOST = f"unix://{OWN_RUN_DIR}/docker.sock"


@contextlib.contextmanager
def machine_lock(name: str) -> Iterator[None]:
    """Held by one process of this machine at a time, whichever clone it runs from (they
    all share one engine and its images)."""
    with (Path(tempfile.gettempdir()) / f"kafkalite-docker-{name}.lock").open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


class NoEngine(Exception):
    """Why no container engine can run here (the tests print it when they skip)."""


@dataclass
class Engine:
    host: str
    client: docker.DockerClient
    own: bool  # started by scripts/docker-engine.sh, stopped by the last session out
    lock: IO[str] | None = None

    @property
    def socket_path(self) -> str:
        return self.host.removeprefix("unix://")

    def release(self) -> None:
        self.client.close()
        if self.lock is None:
            return
        fcntl.flock(self.lock, fcntl.LOCK_UN)
        try:
            fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.lock.close()
            return  # another session still uses the engine; it stops it when done
        try:  # still holding the lock: a session starting now waits, then restarts it
            _run(["bash", str(REPO / "scripts" / "docker-engine.sh"), "stop"], timeout_s=60)
        finally:
            self.lock.close()


def _answers(host: str) -> docker.DockerClient | None:
    try:
        client = docker.DockerClient(base_url=host, version="auto", timeout=60)
        client.ping()
    except docker.errors.DockerException:
        return None
    return client


def _run(command: list[str], timeout_s: float) -> str:
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NoEngine(f"{command[0]}: {exc}") from None
    if done.returncode != 0:
        raise NoEngine(f"{Path(command[0]).name} failed: {(done.stderr or done.stdout).strip()}")
    return done.stdout.strip()


def start_engine() -> Engine:
    for host in filter(None, [os.environ.get("DOCKER_HOST"), "unix:///var/run/docker.sock"]):
        client = _answers(host)
        if client is not None:
            return Engine(host, client, own=False)
    _run(["bash", str(REPO / "scripts" / "install-docker-engine.sh")], timeout_s=600)
    OWN_RUN_DIR.mkdir(parents=True, exist_ok=True)
    lock = (OWN_RUN_DIR / "sessions.lock").open("a")
    fcntl.flock(lock, fcntl.LOCK_SH)  # before start: a session stopping the engine is done
    try:
        host = _run(["bash", str(REPO / "scripts" / "docker-engine.sh"), "start"], timeout_s=120)
        client = _answers(host)
        if client is None:
            raise NoEngine(f"scripts/docker-engine.sh started {host}, which does not answer")
    except NoEngine:
        lock.close()
        raise
    return Engine(host, client, own=True, lock=lock)
