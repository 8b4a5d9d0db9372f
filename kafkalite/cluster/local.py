"""The local backend: each broker is its own OS process, started detached.

Processes outlive the command that started them (``kafkalite up`` returns), so their
pids live in ``cluster.json`` and every later command finds them there.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import psutil

from kafkalite.cluster.backend import BrokerState
from kafkalite.cluster.faults import (
    APPLIED_FILE,
    APPLY_TIMEOUT_S,
    FaultState,
    applied_generation,
    await_applied,
    load_faults,
    save_faults,
    save_links,
)
from kafkalite.cluster.spec import BrokerSpec, ClusterError, ClusterSpec


def _process(broker: BrokerSpec) -> psutil.Process | None:
    """The broker's process, if its recorded pid is still that broker. A pid recorded by an
    earlier run may belong to another process by now: after a reboot, or in a student's
    new container (JupyterHub starts a culled student's server afresh, with their old
    cluster folder in their home and pids counted from 1 again), where it may be their
    own kernel, which ``kill`` would then have killed."""
    if broker.pid is None:
        return None
    try:
        process = psutil.Process(broker.pid)
        if process.status() == psutil.STATUS_ZOMBIE:
            process.wait(0)
            return None
        if str(Path(broker.data_dir)) not in process.cmdline():
            return None
        return process
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.TimeoutExpired):
        return None


def _applied(root: Path) -> int:
    try:
        return applied_generation((root / APPLIED_FILE).read_text())
    except FileNotFoundError:
        return 0


def _links_daemon(spec: ClusterSpec) -> psutil.Process | None:
    """The cluster's link-proxy daemon, if its recorded pid is still that daemon (a pid
    left from an earlier run may belong to another process by now)."""
    if spec.links_pid is None:
        return None
    try:
        process = psutil.Process(spec.links_pid)
        if "kafkalite.cluster.link_proxies" not in process.cmdline():
            return None
        return process
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None


LOG = "broker.log"
LAUNCH_TIMEOUT_S = 120.0  # the launcher's imports: ~1 s of CPU, far longer on a starved one


class LocalProcessBackend:
    ready_timeout_s = 30.0

    def __init__(self) -> None:
        # the link-proxy daemon start_network started and nobody has seen listening yet
        # (its last port, its process): start_all waits for it before forking brokers
        self._network_starting: tuple[int, subprocess.Popen[bytes]] | None = None

    def start(self, broker: BrokerSpec, configs: dict[str, str]) -> None:
        self.start_all([(broker, configs)])

    def start_all(self, brokers: list[tuple[BrokerSpec, dict[str, str]]]) -> None:
        """Fork every broker from one Python that imported the broker once
        (``kafkalite.broker.launcher``): three imports of ~1.1 s of CPU each were most of
        a 3-broker start on two cores. The launcher imports while the link-proxy daemon
        starts (each on its own core), and is told which brokers to fork once the links
        listen, so that no broker meets a link that is not there yet. The brokers are
        detached: no one's children. Their command line (the launcher's) names their data
        directories, which ``_process`` checks."""
        requests = []
        for broker, configs in brokers:
            data_dir = Path(broker.data_dir)
            data_dir.mkdir(parents=True, exist_ok=True)
            requests.append({"args": _broker_args(broker, configs), "log": str(data_dir / LOG)})
        data_dirs = [str(Path(broker.data_dir)) for broker, _ in brokers]
        launcher = subprocess.Popen(
            [sys.executable, "-m", "kafkalite.broker.launcher", *data_dirs],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            if self._network_starting is not None:
                _wait_listening(*self._network_starting)
                self._network_starting = None
            out, err = launcher.communicate(json.dumps(requests), timeout=LAUNCH_TIMEOUT_S)
        except BaseException:
            launcher.kill()
            launcher.wait()
            raise
        if launcher.returncode != 0:
            raise ClusterError(f"the brokers could not be started: {err[-2000:]}")
        pids: list[int] = json.loads(out.splitlines()[-1])
        for (broker, _), pid in zip(brokers, pids, strict=True):
            broker.pid = pid
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
        if process is None:
            broker.stopped = True
            return
        process.send_signal(signal.SIGCONT)
        process.terminate()
        graceful = _reap(process, timeout_s)
        if not graceful:
            process.kill()
            _reap(process, 10)
        broker.stopped = graceful

    def pause(self, broker: BrokerSpec) -> None:
        process = _process(broker)
        if process is not None:
            process.send_signal(signal.SIGSTOP)

    def resume(self, broker: BrokerSpec) -> None:
        process = _process(broker)
        if process is not None:
            process.send_signal(signal.SIGCONT)

    # ---- the network: a link-proxy daemon and faults.json ------------------------------

    def start_network(self, spec: ClusterSpec) -> None:
        links = spec.links()
        if not links:
            return
        root = Path(spec.root)
        save_links(root, links)
        save_faults(root, FaultState())
        with (root / "links.log").open("ab") as out:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "kafkalite.cluster.link_proxies",
                    "--dir",
                    str(root),
                    # told by SIGHUP when faults.json changes (``_update_faults``); waking
                    # every 50 ms to look cost an idle cluster 0.4% of a core
                    "--poll-ms",
                    "1000",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        spec.links_pid = process.pid
        self._network_starting = (links[-1].listen_port, process)  # start_all waits for it

    def stop_network(self, spec: ClusterSpec) -> None:
        if spec.links_pid is None:
            return
        with contextlib.suppress(psutil.NoSuchProcess):
            process = psutil.Process(spec.links_pid)
            process.terminate()
            if not _reap(process, 5):
                process.kill()
        spec.links_pid = None

    def _update_faults(self, spec: ClusterSpec, change: Callable[[FaultState], None]) -> None:
        if not spec.links():
            raise ClusterError("network faults need at least two brokers")
        root = Path(spec.root)
        state = load_faults(root)
        change(state)
        generation = save_faults(root, state)
        daemon = _links_daemon(spec)
        if daemon is None:
            return  # no network running: a starting one begins healed
        with contextlib.suppress(psutil.NoSuchProcess):
            daemon.send_signal(signal.SIGHUP)  # re-read it now
        if not await_applied(partial(_applied, root), generation, poll_s=0.005):
            raise ClusterError(
                f"the link proxies did not take the fault within {APPLY_TIMEOUT_S:.0f} s"
                f" (see {root / 'links.log'})"
            )

    def isolate(self, spec: ClusterSpec, broker_id: int) -> None:
        self._update_faults(spec, lambda s: s.isolated.add(broker_id))

    def partial_partition(self, spec: ClusterSpec, broker_id: int) -> None:
        self._update_faults(spec, lambda s: s.partially_partitioned.add(broker_id))

    def heal(self, spec: ClusterSpec, broker_id: int | None) -> None:
        if spec.links():
            self._update_faults(spec, lambda s: s.heal(broker_id))

    def slow(self, spec: ClusterSpec, broker_id: int, delay_ms: int) -> None:
        self._update_faults(spec, lambda s: s.slow_ms.__setitem__(broker_id, delay_ms))

    def isolated(self, spec: ClusterSpec) -> set[int]:
        return load_faults(Path(spec.root)).isolated if spec.links() else set()

    def slowed(self, spec: ClusterSpec) -> dict[int, int]:
        return load_faults(Path(spec.root)).slow_ms if spec.links() else {}

    def partially_partitioned(self, spec: ClusterSpec) -> set[int]:
        return load_faults(Path(spec.root)).partially_partitioned if spec.links() else set()

    def state(self, broker: BrokerSpec) -> BrokerState:
        process = _process(broker)
        if process is None:
            return BrokerState.STOPPED if broker.stopped else BrokerState.DEAD
        if process.status() == psutil.STATUS_STOPPED:
            return BrokerState.PAUSED
        return BrokerState.RUNNING


def _broker_args(broker: BrokerSpec, configs: dict[str, str]) -> list[str]:
    """The arguments of ``python -m kafkalite.broker`` for this broker."""
    args = ["--id", str(broker.broker_id), "--host", broker.host, "--port", str(broker.port)]
    args += ["--admin-port", str(broker.admin_port), "--data-dir", str(Path(broker.data_dir))]
    for name, value in configs.items():
        args += ["--config", f"{name}={value}"]
    return args


def _wait_listening(port: int, process: subprocess.Popen[bytes], timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ClusterError("the link-proxy daemon exited; see links.log in the cluster dir")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.02)
    raise ClusterError(f"the link-proxy daemon did not listen on port {port}")


def _reap(process: psutil.Process, timeout_s: float) -> bool:
    """Wait for exit; reaps our own child. A process another one started (``kafkalite
    stop`` on a broker a notebook or ``kafkalite lab`` started) stays a zombie until its
    parent reaps it: that is an exit too, or every such stop would wait out its grace
    and end in SIGKILL."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            process.wait(0.1)
            return True
        except psutil.TimeoutExpired:
            if _exited(process):
                return True
        except psutil.NoSuchProcess:
            return True
    return _exited(process)


def _exited(process: psutil.Process) -> bool:
    try:
        return bool(process.status() == psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return True
