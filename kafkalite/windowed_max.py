"""The largest value seen in the last few seconds, for signals that come in spikes.

An event loop's lag (``broker.loop_lag``) is judged by its worst recent value: a loop
that stalled a moment ago may stall again, and ``status`` should still show it. Kept as a
monotonic queue (each kept value larger than every later one), so recording and reading
cost O(1) amortised however often samples come. Pure: the caller passes the time.
"""

from __future__ import annotations

from collections import deque


class WindowedMax:
    """The largest value recorded in the last ``window_ms`` (0 when there is none)."""

    def __init__(self, window_ms: int) -> None:
        self.window_ms = window_ms
        self._samples: deque[tuple[int, float]] = deque()  # (time_ms, value), largest first

    def record(self, now_ms: int, value: float) -> None:
        # a value no larger than this newer one can never again be the largest
        while self._samples and self._samples[-1][1] <= value:
            self._samples.pop()
        self._samples.append((now_ms, value))
        self._expire(now_ms)

    def largest(self, now_ms: int) -> float:
        self._expire(now_ms)
        return self._samples[0][1] if self._samples else 0

    def _expire(self, now_ms: int) -> None:
        while self._samples and self._samples[0][0] < now_ms - self.window_ms:
            self._samples.popleft()
