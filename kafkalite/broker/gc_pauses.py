"""Python's garbage collector, kept from stalling the broker: ``gc`` in ``/state``.

A JVM broker's classic way to lose its session with the controller is a long
garbage-collection pause. A Python broker has its own: CPython's full collection walks
every object the collector tracks while holding the GIL, so it stops both of the broker's
threads, the control plane's too. Started, a broker tracks about 50,000 objects, nearly
all of them for good: modules, the protocol's schema classes, recovered logs. Under
client load a full collection came every few seconds, walked them all for 5-35 objects
of garbage, and took 23-53 ms of CPU: on a starved 2-core machine, where the process waits
for a core besides, up to 885 ms of wall time. With a heartbeat due, that can get a live
broker fenced.

So, once started, the broker moves what it holds into the collector's permanent
generation (``gc.freeze``), which no collection walks: full collections then see only
the objects that come and go (a median of 17,600) and take 2-23 ms of CPU, 7 ms at the
median. Garbage made later is collected as before; a cycle among the frozen objects
never would be, which is why the freeze comes after startup's own garbage is collected.
The machine's own starvation stays: a starved broker's contacts with the controller still
come a few hundred ms late at times (``bench.starvation``), which its session
(``broker.session.timeout.ms``, ``controller.heartbeats``) absorbs.

``GcPauses`` times every collection, so that ``/state`` shows what the collector costs:
how many objects are frozen, how many full collections ran, and the longest pauses.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from typing import Any

FULL_COLLECTION = 2
"""The oldest generation: collecting it walks every tracked object."""


def freeze_startup_objects() -> None:
    """Collect startup's garbage, then take every object left out of the collector's
    reach (call once the broker serves)."""
    gc.collect()
    gc.freeze()


class GcPauses:
    """The collector's pauses in this process, timed through ``gc.callbacks`` once
    ``install``-ed. Written by whichever thread collects, read by any: each value is
    replaced whole."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock
        self._started = 0.0
        self.longest_ms = 0.0
        """The longest pause of any collection since the broker started."""
        self.last_full_ms = 0.0
        """How long the latest full collection took."""
        self.longest_full_ms = 0.0
        """The longest full collection since the broker started."""

    def install(self) -> None:
        gc.callbacks.append(self.on_collection)

    def on_collection(self, phase: str, info: dict[str, int]) -> None:
        """``gc.callbacks``' signature: ``phase`` is "start" or "stop"."""
        if phase == "start":
            self._started = self._clock()
            return
        pause_ms = (self._clock() - self._started) * 1000
        self.longest_ms = max(self.longest_ms, pause_ms)
        if info["generation"] == FULL_COLLECTION:
            self.last_full_ms = pause_ms
            self.longest_full_ms = max(self.longest_full_ms, pause_ms)

    def state(self) -> dict[str, Any]:
        """What ``/state`` shows of the collector."""
        return {
            "frozen_objects": gc.get_freeze_count(),
            "full_collections": gc.get_stats()[FULL_COLLECTION]["collections"],
            "last_full_pause_ms": round(self.last_full_ms, 1),
            "longest_full_pause_ms": round(self.longest_full_ms, 1),
            "longest_pause_ms": round(self.longest_ms, 1),
        }
