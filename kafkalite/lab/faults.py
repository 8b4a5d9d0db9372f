"""Fault windows: when each broker was broken, for the timeline's shading.

A window opens when a fault verb breaks a broker (kill, stop, pause, isolate, slow,
partial_partition) and closes when the verb that undoes it runs (start/restart, resume,
heal). The lab's cluster records every verb it carries out, whether a notebook cell or a
dashboard button asked, so ``lab.timeline(history)`` shades exactly what happened during
a run.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from kafkalite.cluster import Cluster, ClusterBackend
from kafkalite.cluster.spec import ClusterSpec

OPENED_BY = ("kill", "stop", "pause", "isolate", "slow", "partial_partition")
CLOSED_BY: dict[str, tuple[str, ...]] = {
    "start": ("kill", "stop"),
    "restart": ("kill", "stop", "pause"),
    "resume": ("pause",),
    "heal": ("isolate", "slow", "partial_partition"),
}


@dataclass(slots=True)
class FaultWindow:
    verb: str
    broker: int
    start: float  # wall-clock seconds (time.time()), like history records and events
    end: float | None = None  # None while the fault lasts

    @property
    def label(self) -> str:
        return f"{self.verb} {self.broker}"


class FaultLog:
    """Every fault window, in the order they opened (thread-safe: the dashboard's
    buttons and a notebook cell may act at once)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.windows: list[FaultWindow] = []
        self._clock = clock
        self._lock = threading.Lock()

    def opened(self, verb: str, broker: int, at: float | None = None) -> None:
        """``verb`` broke ``broker`` (at ``at``, default now); a broker already broken the
        same way keeps its first window."""
        with self._lock:
            if not any(w.broker == broker and w.verb == verb for w in self._open()):
                self.windows.append(FaultWindow(verb, broker, self._clock() if at is None else at))

    def closed(self, verb: str, broker: int | None) -> None:
        """``verb`` undid the faults it undoes, on ``broker`` (None: on every broker)."""
        undone = CLOSED_BY[verb]
        with self._lock:
            now = self._clock()
            for window in self._open():
                if window.verb in undone and broker in (None, window.broker):
                    window.end = now

    def _open(self) -> list[FaultWindow]:
        return [w for w in self.windows if w.end is None]


class ObservedCluster(Cluster):
    """A :class:`Cluster` that writes every fault verb it carries out into ``faults``.

    A window starts when the verb was asked for (a controlled shutdown takes a while, and
    the broker is leaving from its first moment) and is written once the verb succeeded.
    """

    def __init__(self, spec: ClusterSpec, backend: ClusterBackend | None = None) -> None:
        super().__init__(spec, backend)
        self.faults = FaultLog()

    def _break(self, verb: str, broker_id: int, action: Callable[..., None], *args: int) -> None:
        asked = time.time()
        action(broker_id, *args)
        self.faults.opened(verb, broker_id, asked)

    def kill(self, broker_id: int) -> None:
        self._break("kill", broker_id, super().kill)

    def stop(self, broker_id: int) -> None:
        self._break("stop", broker_id, super().stop)

    def pause(self, broker_id: int) -> None:
        self._break("pause", broker_id, super().pause)

    def isolate(self, broker_id: int) -> None:
        self._break("isolate", broker_id, super().isolate)

    def slow(self, broker_id: int, delay_ms: int = 500) -> None:
        self._break("slow", broker_id, super().slow, delay_ms)

    def partial_partition(self, broker_id: int) -> None:
        self._break("partial_partition", broker_id, super().partial_partition)

    def resume(self, broker_id: int) -> None:
        super().resume(broker_id)
        self.faults.closed("resume", broker_id)

    def heal(self, broker_id: int | None = None) -> None:
        super().heal(broker_id)
        self.faults.closed("heal", broker_id)

    def start(self, broker_id: int, wait: bool = True) -> None:
        super().start(broker_id, wait)
        self.faults.closed("start", broker_id)

    def restart(self, broker_id: int, wait: bool = True) -> None:
        super().restart(broker_id, wait)
        self.faults.closed("restart", broker_id)
