"""A submission's sandbox for the whole of its grading, as the grader drives it.

One sandboxed process (``grader.session``, under ``grader.sandbox``'s uid, limits and
clean-up) loads the submission once; each run is a fresh fork of it, started by writing
the run's request into a directory of its own and naming that directory on the control
channel. The grader then waits for the run to end (killing it at its time limit, after
asking it where it was stuck), and reads back the one file the run may answer with,
``result.json``, and what it printed.

Everything that comes back is data from the student's side, and read as such: the
directory is opened once by the grader and read through that descriptor (a run that
swaps it for a symlink changes nothing), files are opened without following links and
only up to a size, messages are checked before use, and a process id is never taken
from the sandbox: killing a run means killing every process of the sandbox but its first.
The file-step channel is served here too, into the submission's :class:`StepGate`.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader import sandbox
from grader.channel import ClusterServer, socket_pair
from grader.crash_points import Step
from grader.gate import Passage, StepGate
from grader.kafka_proxy import KafkaProxy
from kafkalite.cluster import Cluster

REPO_ROOT = Path(__file__).resolve().parent.parent
MAX_MESSAGE = 64 << 10
MAX_RESULT = 16 << 20
OUTPUT_SHOWN = 8 << 10
STACK_WAIT_S = 1.0
OUTPUT_CHECK_S = 0.25  # how often a run's output is measured against its limit
SESSION_TIME_S = 4 * 3600.0  # the sandbox's own bound; every run has its own, far shorter


@dataclass(slots=True)
class RunResult:
    """How one run ended. ``data`` is ``result.json`` parsed as JSON (None if the run
    wrote none), not yet believed: ``grader.student`` validates it."""

    status: int | None
    data: Any
    output: str
    seconds: float
    timed_out: bool = False
    stack: str = ""
    stray_files: list[str] = field(default_factory=list)
    flooded: bool = False
    """Stopped for printing more than the limit allows."""


@dataclass(slots=True)
class RunDir:
    """A run's directory, opened by the grader (``fd``) when it made it."""

    path: Path
    fd: int
    files: dict[str, bytes] = field(default_factory=dict)

    def read(self, name: str, limit: int = MAX_RESULT) -> bytes | None:
        """A regular file of the directory (no link followed), at most ``limit`` bytes."""
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=self.fd)
        except OSError:
            return None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None
            return os.read(fd, limit)
        finally:
            os.close(fd)

    def names(self) -> list[str]:
        try:
            return sorted(os.listdir(self.fd))
        except OSError:
            return []

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)


class Session:
    """The submission's sandbox: started once, then a fresh fork for every run."""

    def __init__(self, module: Path, root: Path, limits: sandbox.Limits) -> None:
        self.module = module
        self.root = root
        self.limits = limits
        self.gate = StepGate()
        self.defined: set[str] = set()
        self.load_error: str | None = None
        self.cluster_server: ClusterServer | None = None
        self._cluster: Cluster | None = None
        self.proxy: KafkaProxy | None = None
        self._zygote: int | None = None
        self._runs = 0
        self._stop = threading.Event()
        self._lost = False
        self._thread: threading.Thread | None = None
        self._slot = sandbox.UidSlot()
        self.uid: int | None = None
        self.outcome: sandbox.Outcome | None = None
        self._passages: dict[tuple[str, str], Passage] = {}
        self._run_id = ""

    # ---- start and stop --------------------------------------------------------------

    def start(self) -> None:
        self._stop = threading.Event()
        self._lost = False
        self._slot = sandbox.UidSlot()
        self._slot.__enter__()
        self.uid = self._slot.uid if sandbox.confined_by_uid() else None
        self.dir = self.root / f"session-{os.getpid()}-{time.monotonic_ns()}"
        self.dir.mkdir(parents=True)
        (self.dir / "tmp").mkdir()
        (self.dir / "runs").mkdir()
        for path in (self.dir, self.dir / "tmp"):
            if self.uid is not None:
                os.chown(path, self.uid, self.uid)
        self.dir.chmod(0o755)
        control, control_child = socket_pair()
        steps, steps_child = socket_pair()
        cluster, cluster_child = socket_pair()
        self._control, self._steps, self._cluster_end = control, steps, cluster
        self.cluster_server = ClusterServer(cluster)
        self.cluster_server.cluster = self._cluster
        self.cluster_server.start()
        threading.Thread(target=self._serve_steps, daemon=True).start()
        job = self.dir / "job.json"
        job.write_text(
            json.dumps(
                {
                    "submission": str(self.module),
                    "control_fd": control_child.fileno(),
                    "steps_fd": steps_child.fileno(),
                    "cluster_fd": cluster_child.fileno(),
                }
            )
        )
        ready = threading.Event()
        limits = sandbox.Limits(
            **{**_fields(self.limits), "time_s": SESSION_TIME_S}  # each run has its own
        )
        children = (control_child, steps_child, cluster_child)
        started = threading.Event()

        def on_start(pid: int) -> None:
            self._zygote = pid
            started.set()

        def serve() -> None:
            try:
                self.outcome = sandbox.run(
                    [sys.executable, "-m", "grader.session", str(job)],
                    self.dir,
                    limits,
                    _child_env(self.dir),
                    self.uid,
                    pass_fds=[c.fileno() for c in children],
                    ready=ready,
                    on_start=on_start,
                    stop=self._stop,
                )
            finally:
                started.set()

        self._thread = threading.Thread(target=serve, daemon=True)
        self._thread.start()
        started.wait()
        for child in children:
            child.close()
        self._await_ready(ready)

    def _await_ready(self, ready: threading.Event) -> None:
        self._control.settimeout(self.limits.startup_s)
        try:
            message = json.loads(self._control.recv(MAX_MESSAGE) or b"{}")
        except (OSError, ValueError):
            message = {}
        self._control.settimeout(None)
        ready.set()
        if message.get("ready") is True and isinstance(message.get("defined"), list):
            self.defined = {str(n) for n in message["defined"]}
        else:
            error = message.get("error")
            self.load_error = str(error)[:2000] if error else self._why_not_loaded()

    def _why_not_loaded(self) -> str:
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self.outcome is not None and self.outcome.problem is not None:
            return f"could not be loaded: {self.outcome.problem}"
        return "could not be loaded (the sandbox ended before it said it had)"

    def close(self) -> sandbox.Outcome | None:
        self._stop.set()
        with contextlib.suppress(OSError):
            self._control.close()
        if self._thread is not None:
            self._thread.join(timeout=60)
        for end in (self._steps, self._cluster_end):
            with contextlib.suppress(OSError):
                end.close()
        self._slot.__exit__(None, None, None)
        return self.outcome

    # ---- runs ------------------------------------------------------------------------

    def attach(self, cluster: Cluster | None, proxy: KafkaProxy | None) -> None:
        """Runs from now on reach this cluster, through this proxy (None: no cluster)."""
        self._cluster = cluster
        self.proxy = proxy
        if self.cluster_server is not None:
            self.cluster_server.cluster = cluster

    def new_dir(self, name: str | None = None) -> RunDir:
        self._runs += 1
        path = self.dir / "runs" / f"{self._runs}-{name or 'run'}"
        path.mkdir()
        if self.uid is not None:
            os.chown(path, self.uid, self.uid)
        return RunDir(path, os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW))

    def run(
        self, request: dict[str, Any], rundir: RunDir, time_s: float, watched: bool = False
    ) -> RunResult:
        """One run in ``rundir``; ``watched``: its durable steps go through the gate (the
        caller opened a run on it, and closes it)."""
        if self._lost:  # an earlier run stopped the sandbox: a fresh one for this run
            self.close()
            self.start()
        if self.load_error is not None or self._zygote is None:
            raise RuntimeError("the submission is not loaded")
        self._runs += 1
        self._run_id = str(self._runs)
        full = {
            **request,
            "id": self._run_id,
            "steps": watched,
            "cpu_s": time_s + 5,
            "cluster_dir": None if self._cluster is None else self._cluster.spec.root,
            "proxy_ports": {} if self.proxy is None else self.proxy.ports,
        }
        (rundir.path / "request.json").write_text(json.dumps(full))
        started = time.monotonic()
        try:
            self._control.send(json.dumps({"dir": str(rundir.path)}).encode())
        except OSError:
            self._lost = True
        status, timed_out, printed = self._await_end(rundir, time_s)
        self.kill_runs()
        if self.proxy is not None:  # nothing the run had in flight may land after its end
            self.proxy.cut_all()
        stray = sandbox.sweep_stray_files(self.uid) if self.uid is not None else []
        raw = rundir.read("result.json")
        try:
            data = json.loads(raw) if raw is not None else None
        except ValueError:
            data = None
        output = rundir.read("output.txt", self.limits.max_output_bytes) or b""
        stack = output[printed:].decode(errors="replace") if timed_out else ""
        shown = output[: printed if timed_out else len(output)][-OUTPUT_SHOWN:]
        return RunResult(
            status, data, shown.decode(errors="replace"), time.monotonic() - started,
            timed_out, stack, stray, flooded=printed < 0,
        )  # fmt: skip

    def _await_end(self, rundir: RunDir, time_s: float) -> tuple[int | None, bool, int]:
        """(exit status, timed out, how much it printed before its stack was asked for)."""
        deadline = time.monotonic() + time_s
        while (remaining := deadline - time.monotonic()) > 0:
            if self._printed(rundir) > self.limits.max_output_bytes:
                self.kill_runs()
                return None, False, -1
            self._control.settimeout(min(remaining, OUTPUT_CHECK_S))
            try:
                message = self._control.recv(MAX_MESSAGE)
            except TimeoutError:
                continue
            except OSError:
                self._lost = True
                return None, False, 0
            finally:
                self._control.settimeout(None)
            if not message:
                self._lost = True
                return None, False, 0
            with contextlib.suppress(ValueError, AttributeError):
                answer = json.loads(message)
                if answer.get("ended") == self._run_id and isinstance(answer.get("status"), int):
                    if self._printed(rundir) > self.limits.max_output_bytes:
                        return None, False, -1  # it printed past the limit between two looks
                    return int(answer["status"]), False, 0
        return None, True, self._ask_for_stack(rundir)

    @staticmethod
    def _printed(rundir: RunDir) -> int:
        try:
            return os.stat("output.txt", dir_fd=rundir.fd, follow_symlinks=False).st_size
        except OSError:
            return 0

    def _ask_for_stack(self, rundir: RunDir) -> int:
        """Have a run that ran out of time print where it was (its threads' stacks:
        ``faulthandler`` on SIGUSR1); returns where in its output the stacks begin."""
        before = len(rundir.read("output.txt") or b"")
        for pid in self._run_processes():
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGUSR1)
        deadline = time.monotonic() + STACK_WAIT_S
        while time.monotonic() < deadline:
            text = rundir.read("output.txt") or b""
            if b"most recent call first" in text[before:]:
                time.sleep(0.1)  # the other threads' stacks follow
                break
            time.sleep(0.05)
        return before

    def _run_processes(self) -> list[int]:
        if self._zygote is None:
            return []
        with contextlib.suppress(Exception):
            import psutil  # noqa: PLC0415

            return [c.pid for c in psutil.Process(self._zygote).children()]
        return []

    def kill_runs(self) -> None:
        """Kill every process of the sandbox but the one that forks the runs."""
        if self._zygote is not None:
            sandbox.kill_all_but(self._zygote, self.uid)

    # ---- the file-step channel -------------------------------------------------------

    def _serve_steps(self) -> None:
        with contextlib.suppress(OSError):
            while message := self._steps.recv(MAX_MESSAGE):
                answer = self._step(message)
                if answer is not None:
                    self._steps.send(json.dumps(answer).encode())

    def _step(self, message: bytes) -> dict[str, Any] | None:
        try:
            m = json.loads(message)
            run, seq, phase = str(m["run"]), int(m["seq"]), m["phase"]
            step = Step(str(m["label"])[:200], str(m["detail"])[:200], str(m["after"])[:200])
        except (ValueError, KeyError, TypeError):
            return None
        if run != self._run_id:
            return {"run": run, "seq": seq, "go": False}  # a run that is over
        if phase == "before":
            passage = self.gate.before(step)
            self._passages[run, step.label] = passage
            return {"run": run, "seq": seq, "go": passage.go}
        passage = self._passages.pop((run, step.label), Passage(go=False))
        return {"run": run, "seq": seq, "go": self.gate.after(passage)}


def _fields(limits: sandbox.Limits) -> dict[str, Any]:
    return {name: getattr(limits, name) for name in limits.__dataclass_fields__}


def _child_env(workdir: Path) -> dict[str, str]:
    """The sandbox's environment: nothing of the grader's but what Python needs."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(workdir),
        "PYTHONPATH": str(REPO_ROOT),
        "MPLBACKEND": "Agg",
        "OPENBLAS_NUM_THREADS": "1",  # no thread pool in the process every run forks from
        "PYTHONDONTWRITEBYTECODE": "1",
    }
