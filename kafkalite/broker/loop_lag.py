"""How late an event loop runs: ``loop_lag_ms`` in ``/state``.

A task asks to wake every ``interval``; how much later than asked it really wakes is the
loop's lag: the time that callbacks ahead of it (client requests) or other processes (a
shared CPU) kept it waiting. A broker with a large lag is busy, not dead: ``status`` shows
it, and the controller does not fence it: heartbeats run on the control plane.

``LoopLagMonitor`` keeps the worst lag of the last few seconds (a ``WindowedMax``); what
other threads read is one published number, replaced whole.
"""

from __future__ import annotations

import time

from kafkalite.ticks import sleep_until_tick
from kafkalite.windowed_max import WindowedMax

WINDOW_MS = 5_000
INTERVAL_S = 0.5
"""Twice a second, on the same ticks as the broker's 100 ms checks (``kafkalite.ticks``):
on an idle broker each wake-up of its own costs more than the check it runs. A stall
shorter than this that falls between two ticks is not seen; a loop that is busy for
seconds, which is what ``status`` must show, is."""


class LoopLagMonitor:
    """Measures the lag of the loop it runs on; ``lag_ms()`` may be read from any thread."""

    def __init__(self, interval_s: float = INTERVAL_S) -> None:
        self.interval_s = interval_s
        self._window = WindowedMax(WINDOW_MS)
        self._published = 0
        self._last_tick = time.monotonic()

    def lag_ms(self) -> int:
        """The worst lag of the last seconds, or the current stall if that is worse (a
        loop stuck right now has not been able to record it)."""
        stalled = (time.monotonic() - self._last_tick - self.interval_s) * 1000
        return max(self._published, int(stalled))

    async def run(self) -> None:
        while True:
            asked = await sleep_until_tick(self.interval_s)
            now = time.monotonic()
            self._last_tick = now
            now_ms = int(now * 1000)
            self._window.record(now_ms, max(0, int((now - asked) * 1000)))
            self._published = int(self._window.largest(now_ms))
