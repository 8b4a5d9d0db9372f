"""Periodic checks that share their wake-ups.

An idle broker still runs checks on a fixed period: group sessions and rebalance
deadlines, transaction timeouts and ISR lag every 100 ms, the loop-lag probe. Every
wake-up of an idle process costs far more than the check it runs (a pass of the event
loop, system calls, a context switch and cold caches on a busy machine): they were most
of an idle broker's main-thread CPU. ``sleep_until_tick`` sleeps until the next multiple
of the period on the loop's clock, so checks whose periods divide one another wake in the
same pass of the loop. A check still runs once per period; only its phase is fixed.

A check with nothing to watch (no group with members, no transaction in flight, every ISR
full) need not run ten times a second: a ``Ticker`` lets it pick its period before each
sleep (the short one while it watches something, a long one otherwise) and be woken at
once when something it must see arrives (a member joins, a partition changes leader).
"""

from __future__ import annotations

import asyncio
import contextlib


async def sleep_until_tick(period_s: float) -> float:
    """Sleep until the loop's clock reaches the next multiple of ``period_s``; returns that
    instant (in the loop's clock, ``time.monotonic`` for asyncio's loops)."""
    loop = asyncio.get_running_loop()
    due = next_tick(loop.time(), period_s)
    woken: asyncio.Future[None] = loop.create_future()
    handle = loop.call_at(due, _wake, woken)
    try:
        await woken
    finally:
        handle.cancel()
    return due


class Ticker:
    """The wake-ups of one periodic check, on the shared grid of ``sleep_until_tick``, cut
    short by ``wake``. Owned by one event loop: ``wake`` is called on that loop's thread."""

    def __init__(self) -> None:
        self._woken = asyncio.Event()  # binds to the loop that first waits on it

    def wake(self) -> None:
        """Something the check must see now arrived: end the current (or next) sleep."""
        self._woken.set()

    async def sleep(self, period_s: float) -> None:
        """Sleep until the next multiple of ``period_s`` or until woken."""
        due = next_tick(asyncio.get_running_loop().time(), period_s)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout_at(due):
                await self._woken.wait()
        self._woken.clear()


def next_tick(now_s: float, period_s: float) -> float:
    """The first multiple of ``period_s`` after ``now_s``. Ticks of periods that divide
    one another may differ in the last bit (``15 * 0.1 != 3 * 0.5``), far below the
    loop's clock resolution: the loop still runs them in one pass."""
    due = (now_s // period_s + 1) * period_s
    return due if due > now_s else due + period_s  # ``//`` of floats may fall one short


def _wake(woken: asyncio.Future[None]) -> None:
    if not woken.done():
        woken.set_result(None)
