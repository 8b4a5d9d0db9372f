"""How crowded this machine's CPUs are: ``run_queue_per_cpu`` in ``/state``.

A broker's heartbeats come late when its threads wait for a CPU. The active controller
learns that from contacts that arrived late (``controller.heartbeats``), but only once
they arrive: when a class starts its notebooks at once (six client processes and a CPU
burner per core in ``test_starvation``), the first silence of a starved broker came
before any late contact had stretched its session, and a live broker was fenced after
1.2 s. The kernel knows sooner: how many tasks are running or waiting for a CPU right
now. With twelve of them on two CPUs, each gets about a sixth of a CPU, and a broker's
work (a heartbeat waiting behind client requests for the GIL) takes about six times as
long as it would on a quiet machine. So every broker samples the run queue, and the
active controller stretches sessions by it at once (``BrokerHeartbeats``).

Sampled once a second on the control plane's loop-lag ticks (one wake-up for both),
smoothed over about a second so that one crowded instant does not stretch sessions for
a minute, and judged by the most crowded smoothed value of the last minute: a machine
that was crowded a moment ago may be again. Brokers on one machine (local processes, a
course's containers on one host) see the same run queue. The run queue counts every
task of the machine, not of a container's CPU quota: a quota smaller than the machine is
not seen.
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

from kafkalite.broker.loop_lag import CONTROL_INTERVAL_S
from kafkalite.ticks import sleep_until_tick
from kafkalite.windowed_max import WindowedMax

PROC_LOADAVG = Path("/proc/loadavg")
SMOOTHING_MS = 1_000
"""The time constant of the smoothing: a crowd that lasts a second counts nearly whole,
one that lasts a tenth counts a tenth."""
WINDOW_MS = 60_000
"""How long a crowded moment keeps sessions stretched (as a late contact does)."""


def runnable_tasks() -> float | None:
    """The tasks running or waiting for a CPU right now (the caller included): the
    fourth field of Linux's ``/proc/loadavg``, ``runnable/total``. Elsewhere the one-minute
    load average, which follows the same count a minute behind; None if neither exists."""
    try:
        return float(PROC_LOADAVG.read_text().split()[3].split("/")[0])
    except (OSError, IndexError, ValueError):
        pass
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def cpus() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


class RunQueue:
    """Runnable tasks per CPU, smoothed, and the most of it in the last ``WINDOW_MS``.
    Pure: the caller passes the samples and their times."""

    def __init__(self, cpus: int) -> None:
        self.cpus = cpus
        self._smoothed: float | None = None
        self._last_ms = 0
        self._window = WindowedMax(WINDOW_MS)

    def record(self, now_ms: int, runnable: float) -> None:
        per_cpu = runnable / self.cpus
        if self._smoothed is None:
            self._smoothed = per_cpu
        else:
            # exponential smoothing for samples at any spacing: the older value's weight
            # decays with the time since it was taken
            kept = math.exp(-max(0, now_ms - self._last_ms) / SMOOTHING_MS)
            self._smoothed = kept * self._smoothed + (1 - kept) * per_cpu
        self._last_ms = now_ms
        self._window.record(now_ms, self._smoothed)

    def per_cpu(self, now_ms: int) -> float:
        """The most runnable tasks per CPU (smoothed) in the last minute."""
        return self._window.largest(now_ms)


class RunQueueMonitor:
    """Samples the run queue on the loop it runs on; ``per_cpu()`` may be read from any
    thread (one published number, replaced whole)."""

    def __init__(self) -> None:
        self._queue = RunQueue(cpus())
        self._published = 0.0

    def per_cpu(self) -> float:
        return self._published

    async def run(self) -> None:
        while True:
            await sleep_until_tick(CONTROL_INTERVAL_S)
            runnable = runnable_tasks()
            if runnable is None:
                return  # nothing to measure here: sessions stretch by lateness alone
            now_ms = int(time.monotonic() * 1000)
            self._queue.record(now_ms, runnable)
            self._published = round(self._queue.per_cpu(now_ms), 2)
