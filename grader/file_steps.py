"""Inside the sandbox: each durable file step of a run, reported to the grader before it
happens, and held until the grader says go (or kills the run right there).

An audit hook (PEP 578) is installed before the student's code loads; a hook cannot be
removed, and it sees every ``open`` for writing, rename (``os.replace`` and ``os.rename``
both raise ``os.rename``), removal and truncation a Python program makes. While a run is
*armed* (a crash-search instance), each such step on a file under the run's directory is
sent to the grader's gate, and the program waits for the answer. Opening a file that
empties it is two crash points: before, and right after it was emptied (the hook empties
it itself, reports, then lets the real ``open`` go ahead on the empty file, which changes
nothing more), so a save that writes over its only copy is caught between the two.

Drivers report their own steps (an append to a sink) through :func:`report`, and write
their files with the hook :func:`muted` so those writes are not counted twice.

A hook that cannot reach the grader (a program that closed its channel) kills its own
process: a run whose steps go unreported must fail, never pass unwatched. What the hook
cannot see: files written without Python's I/O (a C extension, a subprocess, a JVM).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC
EMPTIED = "once opening it had emptied it, before anything was written to it"
MAX_ANSWER = 4096


class _State:
    """The hook's state: the channel to the gate, the armed run, and a per-thread guard
    so the hook's own file operations and a driver's muted writes are not reported."""

    channel: socket.socket | None = None
    root: str | None = None
    run_id = ""
    seq = 0
    lock = threading.Lock()
    local = threading.local()


def install(channel_fd: int) -> None:
    """Install the hook (once, before the student's code loads), disarmed."""
    _State.channel = socket.socket(fileno=channel_fd)
    sys.addaudithook(_hook)


def arm(root: Path, run_id: str) -> None:
    """Report steps on files under ``root`` from now on, as run ``run_id``."""
    _State.root = os.path.realpath(root) + os.sep
    _State.run_id = run_id


def disarm() -> None:
    _State.root = None


@contextlib.contextmanager
def muted() -> Iterator[None]:
    previous = getattr(_State.local, "busy", False)
    _State.local.busy = True
    try:
        yield
    finally:
        _State.local.busy = previous


def report(label: str, detail: str = "", after: str = "") -> None:
    """A durable step a driver is about to take; returns when the grader says go."""
    if _State.root is not None:
        with muted():
            _ask(label, detail, after, "before")


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if _State.root is None or getattr(_State.local, "busy", False):
        return
    if event not in ("open", "os.rename", "os.remove", "os.truncate"):
        return
    with muted():
        _step(event, args)


def _step(event: str, args: tuple[Any, ...]) -> None:
    # a step's label is its kind, its file is the detail: occurrences count by label, and a
    # temporary file's name (tempfile's, or one with the pid in it) differs in every run,
    # so a label naming it would make the point unreachable in every rerun
    if event == "open":
        path, flags = _inside(args[0]), args[2]
        if path is None or not isinstance(flags, int) or not flags & WRITE_FLAGS:
            return
        if flags & os.O_TRUNC and not flags & os.O_EXCL:
            _ask("open() of a file for writing", path, EMPTIED, "before")
            _empty(args[0])
            _ask("open() of a file for writing", path, EMPTIED, "after")
        elif flags & os.O_APPEND:
            _ask("open() of a file for appending", path, "", "before")
        else:
            _ask("open() of a file for writing, not emptying it", path, "", "before")
    elif event == "os.rename":
        source, target = _inside(args[0]), _inside(args[1])
        if source is not None or target is not None:
            _ask("rename of a file", f"{source or args[0]} → {target or args[1]}", "", "before")
    elif (path := _inside(args[0])) is not None:
        _ask(f"{'removal' if event == 'os.remove' else 'truncation'} of a file", path, "", "before")


def _inside(path: Any) -> str | None:
    """``path`` relative to the armed run's directory, or None if it is elsewhere."""
    if not isinstance(path, str | bytes | os.PathLike):
        return None
    full = os.path.realpath(os.fsdecode(path))
    root = _State.root
    return full[len(root) :] if root is not None and full.startswith(root) else None


def _empty(path: Any) -> None:
    """What opening with truncation does first: leave the file empty (made if missing)."""
    with contextlib.suppress(OSError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666))


def _ask(label: str, detail: str, after: str, phase: str) -> None:
    """Send the step and wait for the grader's answer; a refusal means the grader is
    killing this run, so wait for that; a broken channel kills the run here."""
    channel = _State.channel
    with _State.lock:
        _State.seq += 1
        message = {"run": _State.run_id, "seq": _State.seq, "phase": phase,
                   "label": label, "detail": detail, "after": after}  # fmt: skip
        try:
            assert channel is not None
            channel.send(json.dumps(message).encode())
            while True:
                answer = json.loads(channel.recv(MAX_ANSWER))
                if answer.get("run") == _State.run_id and answer.get("seq") == _State.seq:
                    break
        except (OSError, ValueError, AssertionError):
            os.kill(os.getpid(), signal.SIGKILL)
    if not answer.get("go"):
        threading.Event().wait()  # the grader is killing this run
