"""The notebook's handle on a consumer-group member running as a process (lab 06).

``lab.group_worker("w1", "orders", "billing")`` starts ``python -m
kafkalite.lab.group_worker`` and returns a :class:`GroupWorker`: kill it (SIGKILL, a
crash), freeze and thaw it (SIGSTOP / SIGCONT, a long pause), stop it (a graceful close
that leaves the group), and read its log: what it was assigned, processed, committed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STOP_TIMEOUT_S = 15.0
MID_BATCH_TIMEOUT_S = 60.0


@dataclass
class GroupWorker:
    name: str
    log_path: Path
    process: subprocess.Popen[bytes]
    stderr_path: Path
    ended_on_purpose: bool = field(default=False)
    """Killed or stopped by the lab: its exit is no failure."""

    @classmethod
    def start(cls, name: str, log_dir: Path, args: list[str]) -> GroupWorker:
        log_path = log_dir / f"{name}.jsonl"
        stderr_path = log_dir / f"{name}.stderr"
        # a worker of a name used before (a cell run again, a demo's next run) starts with
        # an empty log: the old one's lines would read as this worker's assignment
        log_path.unlink(missing_ok=True)
        stderr_path.unlink(missing_ok=True)
        with stderr_path.open("ab") as err:
            process = subprocess.Popen(
                [sys.executable, "-m", "kafkalite.lab.group_worker", "--name", name,
                 "--log", str(log_path), "--parent", str(os.getpid()), *args],
                stdout=subprocess.DEVNULL,
                stderr=err,
                stdin=subprocess.DEVNULL,
            )  # fmt: skip
        return cls(name, log_path, process, stderr_path)

    def __repr__(self) -> str:
        state = "running" if self.alive else f"ended ({self.process.returncode})"
        return f"GroupWorker({self.name}: {state}, reads {self.assignment()})"

    # ---- what it did ---------------------------------------------------------------

    def events(self, kind: str | None = None) -> list[dict[str, Any]]:
        """Its log, one dict per step (``kind``: only ``assigned``, ``processed``, ...).
        A worker that exited by itself raises, with its error: a wait on it must not run
        out its time on a dead process."""
        if not self.ended_on_purpose and self.process.poll() is not None:
            raise RuntimeError(
                f"worker {self.name} exited ({self.process.returncode}):\n{self.error()}"
            )
        try:
            lines = self.log_path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        found = [json.loads(line) for line in lines if line.endswith("}")]
        return [e for e in found if kind is None or e["event"] == kind]

    def processed(self) -> list[str]:
        """The values it processed, in order."""
        return [e["value"] for e in self.events("processed")]

    def assignment(self) -> list[int]:
        """The partitions it reads now (under eager rebalancing every assignment replaces
        the last; under cooperative ones, what was revoked goes and what was assigned
        comes)."""
        owned: set[int] = set()
        for e in self.events():
            if e["event"] == "revoked":
                owned -= set(e["partitions"])
            elif e["event"] == "assigned":
                owned |= set(e["partitions"])
        return sorted(owned)

    def uncommitted(self, committed: Mapping[int, int] | None = None) -> list[str]:
        """What it processed that the group has not committed: what a replacement
        processes again if it dies. ``committed``: the group's committed offsets by
        partition as the coordinator holds them (``lab.committed_offsets(group, topic)``),
        the truth once it is dead, since a commit may succeed and the process die before
        logging it. Without them: what its own log shows after its last logged commit."""
        if committed is not None:
            return [
                e["value"]
                for e in self.events("processed")
                if e["offset"] >= committed.get(e["partition"], 0)
            ]
        events = self.events()
        last = max((i for i, e in enumerate(events) if e["event"] == "committed"), default=-1)
        return [e["value"] for e in events[last + 1 :] if e["event"] == "processed"]

    def error(self) -> str:
        """The end of its stderr: why it exited, if it did."""
        try:
            return self.stderr_path.read_text(errors="replace")[-2000:]
        except FileNotFoundError:
            return ""

    # ---- faults --------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL: no last commit, no LeaveGroup; the group notices by its silence."""
        self.ended_on_purpose = True
        self.process.kill()
        self.process.wait(STOP_TIMEOUT_S)

    def kill_mid_batch(
        self,
        committed: Callable[[], Mapping[int, int]],
        at_least: int = 2,
        timeout_s: float = MID_BATCH_TIMEOUT_S,
    ) -> list[str]:
        """SIGKILL it in the middle of a batch: once at least ``at_least`` records it
        processed are past the group's committed offsets (``committed``: the coordinator's,
        e.g. ``lambda: lab.committed_offsets(group, topic)``). Returns those records: what a
        replacement processes again.

        Its log alone cannot time the kill: between reading "mid-batch" there and the
        signal, the worker may finish the batch and commit it (a busy machine makes that
        likely). So it is frozen first (SIGSTOP), judged against the coordinator's offsets
        while it cannot move, and killed only then, or thawed to try again. The offsets are
        read once more after the kill: a commit sent just before the freeze still counts."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if len(self.uncommitted()) >= at_least:
                self.freeze()
                try:
                    mid_batch = len(self.uncommitted(committed())) >= at_least
                except BaseException:  # an offsets read that failed leaves no frozen worker
                    self.thaw()
                    raise
                if mid_batch:
                    self.kill()
                    return self.uncommitted(committed())
                self.thaw()
            time.sleep(0.05)
        raise TimeoutError(
            f"worker {self.name} was never {at_least} records past its group's committed "
            f"offsets within {timeout_s:.0f} s"
        )

    def freeze(self) -> None:
        """SIGSTOP: its heartbeats stop too, as in a long garbage-collection pause."""
        self.process.send_signal(signal.SIGSTOP)

    def thaw(self) -> None:
        self.process.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        """A graceful stop: it finishes its batch, closes, and leaves the group at once."""
        self.ended_on_purpose = True
        if self.alive:
            self.process.send_signal(signal.SIGCONT)
            self.process.terminate()
            try:
                self.process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.kill()
