"""The local backend: each broker is its own OS process, started detached.

Processes outlive the command that started them (``kafkalite up`` returns), so their
pids live in ``cluster.json`` and every later command finds them there.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

from kafkalite.cluster.backend import BrokerState
from kafkalite.cluster.spec import BrokerSpec


def _process(broker: BrokerSpec) -> psutil.Process | None:
    if broker.pid is None:
        return None
    try:
        process = psutil.Process(broker.pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            process.wait(0)
            return None
        return process
    except (psutil.NoSuchProcess, psutil.TimeoutExpired):
        return None


class LocalProcessBackend:
    def start(self, broker: BrokerSpec, configs: dict[str, str]) -> None:
        data_dir = Path(broker.data_dir)
        data_dir.mkdir(parents=True, exist_ok=True)
        command = [
            sys.executable,
            "-m",
            "kafkalite",
            "broker",
            "--id",
            str(broker.broker_id),
            "--host",
            broker.host,
            "--port",
            str(broker.port),
            "--admin-port",
            str(broker.admin_port),
            "--data-dir",
            str(data_dir),
        ]
        for name, value in configs.items():
            command += ["--config", f"{name}={value}"]
        with (data_dir / "broker.log").open("ab") as out:
            process = subprocess.Popen(
                command,
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        broker.pid = process.pid
        broker.stopped = False

    def kill(self, broker: BrokerSpec) -> None:
        process = _process(broker)
        broker.stopped = False  # a killed broker is dead, as after a crash, not "stopped"
        if process is not None:
            process.send_signal(signal.SIGCONT)  # a paused broker must die too
            process.kill()
            _reap(process, 10)

    def stop(self, broker: BrokerSpec, timeout_s: float = 10) -> None:
        process = _process(broker)
        broker.stopped = True
        if process is None:
            return
        process.send_signal(signal.SIGCONT)
        process.terminate()
        if not _reap(process, timeout_s):
            process.kill()
            _reap(process, 10)

    def pause(self, broker: BrokerSpec) -> None:
        process = _process(broker)
        if process is not None:
            process.send_signal(signal.SIGSTOP)

    def resume(self, broker: BrokerSpec) -> None:
        process = _process(broker)
        if process is not None:
            process.send_signal(signal.SIGCONT)

    def state(self, broker: BrokerSpec) -> BrokerState:
        process = _process(broker)
        if process is None:
            return BrokerState.STOPPED if broker.stopped else BrokerState.DEAD
        if process.status() == psutil.STATUS_STOPPED:
            return BrokerState.PAUSED
        return BrokerState.RUNNING


def _reap(process: psutil.Process, timeout_s: float) -> bool:
    """Wait for exit; reaps our own child, polls a process started by another shell."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if process.status() == psutil.STATUS_ZOMBIE:
                process.wait(0.1)
                return True
            process.wait(0.1)
            return True
        except psutil.TimeoutExpired:
            continue
        except psutil.NoSuchProcess:
            return True
    return not process.is_running()
