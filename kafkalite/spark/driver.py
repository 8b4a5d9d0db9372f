"""A Spark driver as a process of its own, so a lab (or a test) can kill it like a crash.

``DriverProcess`` runs a pipeline module (``python -m ...``) in a new process group: the
Python driver, its JVM (with the ``local[*]`` executors), its fork server and its Python
workers. ``kill()`` sends SIGKILL to the whole group, as a machine failure would;
``start()`` again resumes from the query's checkpoint.

A notebook that made a SparkSession of its own has a fork server whose address is in its
environment (:func:`kafkalite.spark.session.prepare_environment`); a driver started from
it gets its own instead (an empty value, fork servers off, is kept), or its Python workers
would be forks of the notebook's, outside the group the kill reaches.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from kafkalite.spark.fork_client import ENV as FORK_SERVER_ENV


def driver_environment(parent: Mapping[str, str]) -> dict[str, str]:
    """The environment of a driver started from ``parent``: without the parent's fork
    server (kept if empty: fork servers turned off)."""
    return {k: v for k, v in parent.items() if k != FORK_SERVER_ENV or not v}


class DriverProcess:
    def __init__(self, module: str, args: list[str], log_dir: str | Path, cwd: str | Path) -> None:
        self.module = module
        self.args = args
        self.log_dir = Path(log_dir)
        self.cwd = Path(cwd)
        self.runs = 0
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def log_path(self) -> Path:
        return self.log_dir / f"driver-{self.runs}.log"

    def start(self, *extra: str) -> subprocess.Popen[bytes]:
        if self.running:
            raise RuntimeError("the driver is already running")
        self.runs += 1
        self.log_dir.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", self.module, *self.args, *extra],
                cwd=self.cwd,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=driver_environment(os.environ),
            )
        return self.process

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL the driver's whole process group (JVM and Python workers included),
        also when the Python driver has already died by itself: its JVM may live on."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):  # the whole group is gone
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(30)

    def wait(self, timeout_s: float) -> int:
        """The exit code once the driver ends (killed if it runs past ``timeout_s``)."""
        assert self.process is not None
        try:
            return self.process.wait(timeout_s)
        finally:
            self.kill()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
