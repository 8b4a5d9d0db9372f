"""The virtual-time loop the unit tests of waiting code run on (``tests.support``): time
jumps to the next timer when nothing is ready, and a pass can be made to run long."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.support import virtual_time

pytestmark = pytest.mark.unit


def test_a_long_wait_takes_no_real_time_and_timers_keep_their_order() -> None:
    async def scenario() -> tuple[list[str], float]:
        loop = virtual_time.loop()
        fired: list[str] = []
        loop.call_later(30, fired.append, "late")
        loop.call_later(5, fired.append, "early")
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(20):
                await asyncio.Event().wait()
        fired.append("timed out")
        await asyncio.sleep(3600)
        return fired, loop.time()

    started = time.monotonic()
    fired, ended = virtual_time.run(scenario())
    assert fired == ["early", "timed out", "late"]
    assert ended == 3620
    assert time.monotonic() - started < 5


def test_a_busy_pass_moves_the_clock_past_timers_that_then_run_late() -> None:
    async def scenario() -> list[float]:
        loop = virtual_time.loop()
        ran_at: list[float] = []
        loop.call_later(0.01, lambda: loop.advance(1.0))
        loop.call_later(0.02, lambda: ran_at.append(loop.time()))
        await asyncio.sleep(2)
        return ran_at

    assert virtual_time.run(scenario()) == [1.01]
