"""The gate every durable step of a sandboxed run passes, in the grader's process.

Two watchers report steps as they happen, from outside the submission's reach: the Kafka
proxy (each state-changing request, before it is forwarded and again once the broker
answered) and the file-step channel (the sandbox's audit hook, which waits for the gate's
word before the file operation goes ahead). The gate serializes them, records the run's
steps, and, when a trial's crash point comes, has the instance SIGKILLed right there:
before the step (the request is never forwarded, the file never touched) or right after
it (the broker's answer is never delivered; the file stays emptied). From the kill on,
every step is refused: whatever the dying instance still had in flight never lands.

Without an open run (a plain ``student.call``) every step passes unrecorded.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from grader.crash_points import CrashPoint, PointMatcher, Step


@dataclass(slots=True)
class Passage:
    """One step's way through the gate: whether it may go ahead, and whether it was the
    trial's crash point (so its "after" can kill)."""

    go: bool
    is_point: bool = False


@dataclass(slots=True)
class RunRecord:
    """What one instance did, as the gate saw it."""

    steps: list[Step] = field(default_factory=list)
    killed_at: CrashPoint | None = None


class StepGate:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._matcher: PointMatcher | None = None
        self._kill: Callable[[], None] | None = None
        self._record: RunRecord | None = None

    def open_run(self, point: CrashPoint | None, kill: Callable[[], None]) -> None:
        """Watch a new instance: record its steps, kill it (with ``kill``) at ``point``."""
        with self._lock:
            self._matcher = PointMatcher(point)
            self._kill = kill
            self._record = RunRecord()

    def close_run(self) -> RunRecord:
        with self._lock:
            record = self._record if self._record is not None else RunRecord()
            self._matcher = self._kill = self._record = None
            return record

    @property
    def killed(self) -> bool:
        with self._lock:
            return self._record is not None and self._record.killed_at is not None

    def before(self, step: Step) -> Passage:
        """``step`` is about to happen; refused if the instance was killed, or is killed now."""
        with self._lock:
            if self._record is None or self._matcher is None:
                return Passage(go=True)
            if self._record.killed_at is not None:
                return Passage(go=False)
            self._record.steps.append(step)
            is_point = self._matcher.arrived(step)
            if self._matcher.kill_before(is_point):
                self._kill_now()
                return Passage(go=False, is_point=True)
            return Passage(go=True, is_point=is_point)

    def after(self, passage: Passage) -> bool:
        """The step of ``passage`` happened; False if its effect must not reach the
        program (it was the point, and the instance is killed now, or was before)."""
        with self._lock:
            if self._record is None or self._matcher is None:
                return True
            if self._record.killed_at is not None:
                return False
            if self._matcher.kill_after(passage.is_point):
                self._kill_now()
                return False
            return True

    def _kill_now(self) -> None:
        assert self._record is not None and self._matcher is not None and self._kill is not None
        self._record.killed_at = self._matcher.point
        self._kill()
