"""Running a student's code where it cannot hurt the grader, the cluster or other tests.

Each test runs in its own child process with a time limit, a memory limit, a process
limit and an output limit, and when it ends — passed, failed, crashed or timed out —
every process it started is gone. How strongly that holds depends on what we may do:

- **As root** (Gradescope, CI, a course server) the child runs under a uid of its own,
  drawn from a pool so parallel graders never share one (util-linux's ``setpriv`` switches
  to it). That uid owns nothing but the test's directory, so the child cannot signal the
  brokers (they are root's), cannot write outside its directory (except the world-writable
  temporary directories, which are swept and reported afterwards), and ``RLIMIT_NPROC``
  caps every process of that uid — a fork bomb included, even one that calls ``setsid``.
  It keeps one capability, ``CAP_DAC_READ_SEARCH`` (read any file): the Python it runs and
  the packages it imports may live where only root can look (``/root/.pyenv``), and
  reading is all it may do there. Clean-up kills every process of the uid.
- **As an ordinary user** the child runs as that user in a session of its own, with the
  same resource limits but a process limit relative to what the user already runs; clean-up
  kills the session and every descendant still known. A determined submission can escape
  this; use root (or a container) for real grading.

Output is read through a pipe by the parent, which keeps the first ``output_bytes`` and
stops the child once it has printed more than ``max_output_bytes``: a submission printing
100 MB is stopped with a message rather than filling a disk or a results file.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pwd
import resource
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import psutil

UID_POOL_BASE = 61_000
UID_POOL_SIZE = 64
SLOT_DIR = Path("/tmp/kafkalite-grader-slots")
WORLD_WRITABLE_DIRS = (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"))
READ_ONLY = "dac_read_search"
KILL_ROUNDS = 50


DEFAULT_TIME_S = 60.0
# A case that starts Spark starts a JVM or two: 20 s on a quiet machine, several times that
# on a grading server busy with other submissions.
SPARK_TIME_S = 300.0


@dataclass(frozen=True, slots=True)
class Limits:
    """What one test may use. The defaults suit one lab exercise against a 3-broker cluster."""

    time_s: float = DEFAULT_TIME_S  # from the moment the child says it is ready
    startup_s: float = 180.0  # for the child to get ready (imports; long on a loaded machine)
    memory_bytes: int = 2048 << 20  # data (writable private memory) per process
    processes: int = 256  # tasks: threads count too (a Spark driver runs ~100)
    output_bytes: int = 64 << 10  # kept for the report
    max_output_bytes: int = 10 << 20  # printed beyond this: the test is stopped
    file_bytes: int = 256 << 20  # largest file the child may write


@dataclass(slots=True)
class Outcome:
    """How a sandboxed run ended, in terms a student's feedback can use."""

    exit_code: int | None
    duration_s: float
    output: str
    timed_out: bool = False
    output_exceeded: bool = False
    output_truncated: bool = False
    stray_files: list[str] = field(default_factory=list)
    leftover_processes: int = 0

    @property
    def problem(self) -> str | None:
        """One line saying why the run could not count, or None when it ran to its end."""
        if self.timed_out:
            return "stopped at the time limit (an endless loop, or a wait that never ends?)"
        if self.output_exceeded:
            return "stopped: it printed more output than the limit allows"
        if self.stray_files:
            shown = ", ".join(self.stray_files[:3])
            return f"wrote outside its directory ({shown}); only its own directory is allowed"
        if self.exit_code is not None and self.exit_code < 0:
            name = signal.Signals(-self.exit_code).name
            return f"killed by {name} (over the memory or process limit?)"
        return None


class UidSlot:
    """A uid of the pool, held (by an exclusive lock file) for as long as one test runs.

    A uid is free when no run holds its lock and the kernel counts no process of it. The
    second half matters after a fork bomb: its killed processes stay zombies until init
    reaps them, in its own time (seconds on a busy machine; never, under an init that does
    not reap), and ``RLIMIT_NPROC`` counts a uid's zombies. A run given that uid would
    start with its process limit spent: its first thread fails, and OpenBLAS (imported
    with numpy) answers that by raising SIGINT at itself — "killed by SIGINT"."""

    def __init__(self) -> None:
        self.uid = -1
        self._lock: int | None = None

    def __enter__(self) -> UidSlot:
        SLOT_DIR.mkdir(mode=0o700, exist_ok=True)
        for index in range(UID_POOL_SIZE):
            fd = os.open(SLOT_DIR / f"{index}.lock", os.O_CREAT | os.O_RDWR, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            if _processes_of(UID_POOL_BASE + index, zombies=True):
                os.close(fd)  # its zombies still count against its process limit
                continue
            self.uid, self._lock = UID_POOL_BASE + index, fd
            return self
        raise RuntimeError(
            f"all {UID_POOL_SIZE} sandbox uids are in use or hold processes not yet reaped"
        )

    def __exit__(self, *exc: object) -> None:
        if self._lock is not None:
            os.close(self._lock)  # closing releases the flock


def confined_by_uid() -> bool:
    """Whether runs get a uid of their own (only root can switch uids, with ``setpriv``)."""
    return os.geteuid() == 0 and shutil.which("setpriv") is not None


def _private_temporaries(workdir: Path) -> dict[str, str]:
    """Where the child's programs put temporary files: its own directory. A JVM ignores
    ``TMPDIR`` and writes ``/tmp/hsperfdata_<user>`` unless told otherwise."""
    tmp = workdir / "tmp"
    return {
        "PYTHONUNBUFFERED": "1",  # a killed child's last words are feedback
        "TMPDIR": str(tmp),
        "JAVA_TOOL_OPTIONS": f"-XX:-UsePerfData -Djava.io.tmpdir={tmp}",
    }


def _ensure_account(uid: int) -> None:
    """Give a pool uid an account (no home, no login shell) the first time it is used. A
    uid without one has no user name, and some programs refuse to run nameless: Spark's
    driver asks Hadoop who the user is and fails with "Invalid UID"."""
    try:
        pwd.getpwuid(uid)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--no-user-group", "--uid", str(uid),
             "--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin",
             f"kafkalite-sandbox-{uid - UID_POOL_BASE}"],
            check=True, capture_output=True,
        )  # fmt: skip


def _as_uid(argv: Sequence[str], uid: int) -> list[str]:
    ids = [f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
    caps = [f"--inh-caps=-all,+{READ_ONLY}", f"--ambient-caps=+{READ_ONLY}"]
    bounds = [f"--bounding-set=-all,+{READ_ONLY}", "--no-new-privs"]
    return ["setpriv", *ids, *caps, *bounds, *argv]


@contextlib.contextmanager
def sandbox_dir(parent: Path, uid: int | None) -> Iterator[Path]:
    """A fresh directory the child owns and may write; removed afterwards."""
    path = Path(parent) / f"sandbox-{os.getpid()}-{time.monotonic_ns()}"
    path.mkdir(parents=True)
    (path / "tmp").mkdir()
    if uid is not None:
        for p in (path, path / "tmp"):
            os.chown(p, uid, uid)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def run(
    argv: Sequence[str],
    workdir: Path,
    limits: Limits,
    env: Mapping[str, str],
    uid: int | None,
    pass_fds: Sequence[int] = (),
    ready: threading.Event | None = None,
    on_start: Callable[[int], None] | None = None,
    stop: threading.Event | None = None,
) -> Outcome:
    """Run ``argv`` in ``workdir`` under ``limits`` (as ``uid`` when given), then make sure
    nothing it started is left.

    With ``ready``, the time limit starts when it is set (the caller sets it when the child
    says it has loaded what it needs): a student's time is for their code, and loading
    pandas on a busy machine can take longer than a test. ``on_start`` is told the child's
    process id; setting ``stop`` ends the run early (the caller is done with it)."""
    started = time.monotonic()
    if uid is not None:
        _ensure_account(uid)
        sweep_stray_files(uid)  # a crashed earlier grader's leftovers are not this run's
    child = subprocess.Popen(
        _as_uid(argv, uid) if uid is not None else list(argv),
        cwd=workdir,
        env={**env, **_private_temporaries(workdir)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        preexec_fn=_confine(limits, uid),  # noqa: PLW1509  (limits must be set in the child)
        pass_fds=tuple(pass_fds),
        close_fds=True,
    )
    assert child.stdout is not None
    if on_start is not None:
        on_start(child.pid)
    reader = _OutputReader(child.stdout, limits, on_exceeded=lambda: _kill_all(child, uid))
    reader.start()
    timed_out = not _wait(child, limits, ready, stop)
    leftovers = _kill_all(child, uid)
    child.wait()
    reader.join(timeout=5)
    outcome = Outcome(
        exit_code=child.returncode,
        duration_s=time.monotonic() - started,
        output=reader.text(),
        timed_out=timed_out,
        output_exceeded=reader.exceeded,
        output_truncated=reader.truncated,
        leftover_processes=leftovers,
    )
    if uid is not None:
        outcome.stray_files = sweep_stray_files(uid)
    return outcome


def _wait(
    child: subprocess.Popen[bytes],
    limits: Limits,
    ready: threading.Event | None,
    stop: threading.Event | None,
) -> bool:
    """Whether the child ended (or was stopped) within its limits."""
    if ready is not None:
        deadline = time.monotonic() + limits.startup_s
        while not ready.wait(0.05):
            if child.poll() is not None or (stop is not None and stop.is_set()):
                return True
            if time.monotonic() > deadline:
                return False
    deadline = time.monotonic() + limits.time_s
    while (remaining := deadline - time.monotonic()) > 0:
        try:
            child.wait(timeout=remaining if stop is None else min(remaining, 0.1))
        except subprocess.TimeoutExpired:
            if stop is not None and stop.is_set():
                return True
            continue
        return True
    return False


def kill_all_but(keep: int, uid: int | None) -> int:
    """Kill every process of the sandbox but ``keep`` (its first process): those of
    ``uid``, or without one, ``keep``'s descendants. Returns how many were killed."""
    killed: set[int] = set()
    for _ in range(KILL_ROUNDS):
        victims: set[int] = set()
        if uid is not None:
            victims = _processes_of(uid)
        else:
            with contextlib.suppress(psutil.Error):
                victims = {c.pid for c in psutil.Process(keep).children(recursive=True)}
        victims -= {keep, os.getpid()}
        if not victims:
            break
        killed |= victims
        for pid in victims:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)
    return len(killed)


def _confine(limits: Limits, uid: int | None) -> Callable[[], None]:
    """What the child does between fork and exec: its own session and its limits (the
    identity changes later, in ``setpriv``, so the limits bind the new uid)."""
    nproc = limits.processes
    if uid is None:  # RLIMIT_NPROC counts every process of the user: leave room for theirs
        nproc += sum(1 for p in psutil.process_iter(["uids"]) if p.info["uids"].real == os.getuid())

    def confine() -> None:
        os.setsid()
        cpu = int(limits.time_s) + 5
        # RLIMIT_DATA, not RLIMIT_AS: a JVM (Spark's driver) reserves gigabytes of address
        # space it never touches, which an address-space limit refuses at start-up.
        resource.setrlimit(resource.RLIMIT_DATA, (limits.memory_bytes, limits.memory_bytes))
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
        resource.setrlimit(resource.RLIMIT_FSIZE, (limits.file_bytes, limits.file_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))  # counts once setpriv ran

    return confine


class _OutputReader(threading.Thread):
    """Drains the child's output so it never blocks, keeping only the head."""

    def __init__(
        self, stream: IO[bytes], limits: Limits, on_exceeded: Callable[[], object]
    ) -> None:
        super().__init__(daemon=True)
        self._stream = stream
        self._limits = limits
        self._on_exceeded = on_exceeded
        self._head = bytearray()
        self.total = 0
        self.exceeded = False

    @property
    def truncated(self) -> bool:
        return self.total > len(self._head)

    def run(self) -> None:
        while chunk := self._stream.read1(65536):  # type: ignore[attr-defined]
            self.total += len(chunk)
            room = self._limits.output_bytes - len(self._head)
            if room > 0:
                self._head += chunk[:room]
            if self.total > self._limits.max_output_bytes and not self.exceeded:
                self.exceeded = True
                self._on_exceeded()

    def text(self) -> str:
        text = self._head.decode("utf-8", errors="replace")
        if self.truncated:
            text += f"\n[... {self.total - len(self._head)} more bytes of output not shown]"
        return text


def _kill_all(child: subprocess.Popen[bytes], uid: int | None) -> int:
    """Kill the child and everything it started; returns how many others were found."""
    found: set[int] = set()
    for _ in range(KILL_ROUNDS):
        victims = _processes_of(uid) if uid is not None else _session_of(child)
        victims.discard(os.getpid())
        if child.poll() is None:
            victims.add(child.pid)
        if not victims:
            break
        found |= victims - {child.pid}
        for pid in victims:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.02)
    return len(found)


def _processes_of(uid: int, zombies: bool = False) -> set[int]:
    """Every live process of the uid, and its zombies if asked: a zombie is dead (nothing
    to kill), but counts against the uid's ``RLIMIT_NPROC`` until its parent reaps it."""
    pids = set()
    for p in psutil.process_iter(["uids", "status"]):
        uids = p.info["uids"]
        if uids is None or (p.info["status"] == psutil.STATUS_ZOMBIE and not zombies):
            continue
        if uid in (uids.real, uids.effective, uids.saved):
            pids.add(p.pid)
    return pids


def _session_of(child: subprocess.Popen[bytes]) -> set[int]:
    """Without a uid of its own, the child's session (it called setsid) and its descendants."""
    pids = set()
    for p in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            if os.getsid(p.pid) == child.pid:
                pids.add(p.pid)
    with contextlib.suppress(psutil.Error):
        pids |= {c.pid for c in psutil.Process(child.pid).children(recursive=True)}
    return pids


def _owned_by(uid: int) -> Iterator[str]:
    for top in WORLD_WRITABLE_DIRS:
        if not top.is_dir():
            continue
        with contextlib.suppress(OSError):
            for entry in os.scandir(top):
                with contextlib.suppress(OSError):
                    if entry.stat(follow_symlinks=False).st_uid == uid:
                        yield entry.path


def sweep_stray_files(uid: int) -> list[str]:
    """Remove (and return) what the uid left in the shared temporary directories."""
    stray = sorted(_owned_by(uid))
    for path in stray:
        p = Path(path)
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                p.unlink()
    return stray
