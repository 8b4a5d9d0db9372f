"""Delayed operations: requests that wait for a condition (Kafka's purgatory).

An acks=all produce waits for the high watermark to pass its batch; a fetch with
``min_bytes`` waits for data. Each waiter registers under the keys (partitions) whose
change could complete it; whoever changes a partition calls :meth:`Purgatory.notify`, and
waiters re-check their condition. Every wait is bounded by the request's own timeout.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable


class Purgatory:
    def __init__(self) -> None:
        self._waiters: dict[Hashable, set[asyncio.Event]] = defaultdict(set)

    async def wait_until(
        self, keys: Iterable[Hashable], done: Callable[[], bool], timeout_s: float
    ) -> bool:
        """Wait until ``done()`` or the timeout; returns ``done()`` at the end. A request
        that needs no wait (most Fetches of a busy log) costs one ``done()``."""
        finished = done()
        if finished or timeout_s <= 0:
            return finished
        event = asyncio.Event()
        keys = list(keys)
        for key in keys:
            self._waiters[key].add(event)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        try:
            while not done():
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                event.clear()
                try:
                    async with asyncio.timeout(remaining):
                        await event.wait()
                except TimeoutError:
                    break
            return done()
        finally:
            for key in keys:
                waiters = self._waiters.get(key)
                if waiters is not None:
                    waiters.discard(event)
                    if not waiters:
                        del self._waiters[key]

    def notify(self, key: Hashable) -> None:
        for event in self._waiters.get(key, ()):
            event.set()
