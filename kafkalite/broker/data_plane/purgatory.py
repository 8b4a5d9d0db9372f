"""Delayed operations: requests that wait for a condition (Kafka's purgatory).

An acks=all produce waits for the high watermark to pass its batch; a fetch with
``min_bytes`` waits for data. Each waiter registers under the keys (partitions) whose
change could complete it; whoever changes a partition calls :meth:`Purgatory.notify`, and
waiters re-check their condition. Every wait is bounded by the request's own timeout.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable, Iterable


class Purgatory:
    """Waiters by key; owned by the broker's event loop, never touched from another
    thread. A waiter is a future woken by :meth:`notify` or by its deadline's timer,
    renewed after a wake-up that did not complete it: no ``asyncio.Event`` and
    ``asyncio.timeout`` per wait, and ``done()`` checked once per wake-up (each was
    a share of an acks=all Produce's and a held Fetch's cost, issue 29)."""

    def __init__(self) -> None:
        self._waiters: dict[Hashable, set[_Waiter]] = {}

    async def wait_until(
        self, keys: Iterable[Hashable], done: Callable[[], bool], timeout_s: float
    ) -> bool:
        """Wait until ``done()`` or the timeout; returns ``done()`` at the end. A request
        that needs no wait (most Fetches of a busy log) costs one ``done()``."""
        finished = done()
        if finished or timeout_s <= 0:
            return finished
        loop = asyncio.get_running_loop()
        waiter = _Waiter(loop.create_future())
        keys = list(keys)
        waiters = self._waiters
        for key in keys:
            waiters.setdefault(key, set()).add(waiter)
        timer = loop.call_at(loop.time() + timeout_s, waiter.expire)
        try:
            while True:
                await waiter.woken
                if done():
                    return True
                if waiter.expired:
                    return False
                waiter.woken = loop.create_future()
        finally:
            timer.cancel()
            for key in keys:
                held = waiters.get(key)
                if held is not None:
                    held.discard(waiter)
                    if not held:
                        del waiters[key]

    def notify(self, key: Hashable) -> None:
        for waiter in self._waiters.get(key, ()):
            waiter.wake()


class _Waiter:
    """One wait: the future it awaits now, and whether its deadline has passed."""

    __slots__ = ("expired", "woken")

    def __init__(self, woken: asyncio.Future[None]) -> None:
        self.woken = woken
        self.expired = False

    def wake(self) -> None:
        if not self.woken.done():
            self.woken.set_result(None)

    def expire(self) -> None:
        self.expired = True
        self.wake()
