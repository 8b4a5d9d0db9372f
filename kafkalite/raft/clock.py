"""``ResponsiveClock``: time as the quorum should count it, without the process's stalls.

Raft's timers (fetch timeout, check-quorum, election) decide that a *peer* went silent.
When this process itself could not run for a while (a machine shared by a class, a
burst of client work holding the interpreter, SIGSTOP), its timers all come due at once
on waking, before the messages that arrived meanwhile are read: a follower then stands
for election against a healthy leader, a leader resigns. This clock does not count such
a stall: its owner says when it will look again (``expect``, before sleeping until its
next timer); a reading later than that, beyond ``tolerance_ms``, means the process was
stalled, and the overshoot is discounted once. The owner then reads pending messages
before its timers (``stalls`` tells it a stall happened).

The active controller measures brokers' silence on the same clock (``controller.heartbeats``):
a broker is never blamed for time in which the controller could not have heard it.

What it does not do: make a peer that is really stalled look alive. Peers' silence is
still measured in this process's responsive time. Pure: the caller supplies real time.
"""

from __future__ import annotations

from collections.abc import Callable

DEFAULT_TOLERANCE_MS = 50


class ResponsiveClock:
    """Milliseconds that never run backwards and skip this process's own stalls."""

    def __init__(
        self, real_ms: Callable[[], int], tolerance_ms: int = DEFAULT_TOLERANCE_MS
    ) -> None:
        self._real_ms = real_ms
        self.tolerance_ms = tolerance_ms
        self._discounted = 0
        self._last = real_ms()
        self._expected: int | None = None
        self.stalls = 0
        """How many stalls were discounted so far."""
        self.stalled_ms = 0
        """Their total length."""

    def expect(self, at_ms: int) -> None:
        """The owner will read the clock again by ``at_ms`` (in this clock's time) unless
        it is stalled. Readings before ``at_ms`` (a message handled meanwhile, by the
        owner or anyone else on its loop) leave the expectation in place: a stall after
        them is still found by the first reading past it."""
        self._expected = at_ms

    def now(self) -> int:
        t = self._real_ms() - self._discounted
        if self._expected is not None and t >= self._expected:
            overshoot = t - self._expected - self.tolerance_ms
            self._expected = None
            if overshoot > 0:
                self._discounted += overshoot
                self.stalls += 1
                self.stalled_ms += overshoot
                t -= overshoot
        self._last = max(self._last, t)
        return self._last
