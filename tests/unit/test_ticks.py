"""Periodic checks share their wake-ups: each wakes on a multiple of its period."""

from __future__ import annotations

import asyncio
import time

import pytest

from kafkalite.ticks import Ticker, next_tick, sleep_until_tick

pytestmark = pytest.mark.unit
RESOLUTION_S = time.get_clock_info("monotonic").resolution


def test_checks_started_apart_in_one_period_wake_at_the_same_instant() -> None:
    assert next_tick(12.31, 0.1) == next_tick(12.39, 0.1)
    assert next_tick(12.31, 0.1) == pytest.approx(12.4, abs=RESOLUTION_S)
    assert next_tick(12.4, 0.1) == pytest.approx(12.5, abs=RESOLUTION_S)  # never "now"


def test_a_longer_period_that_the_shorter_divides_wakes_on_one_of_its_ticks() -> None:
    for now in (1.45, 2.03, 123.999):
        slow, fast = next_tick(now, 0.5), next_tick(now, 0.1)
        assert fast <= slow + RESOLUTION_S
        assert any(abs(slow - tick) <= RESOLUTION_S for tick in [fast + k * 0.1 for k in range(6)])


@pytest.mark.asyncio
async def test_the_sleep_ends_on_the_tick_it_returns() -> None:
    loop = asyncio.get_running_loop()
    before = loop.time()
    due = await sleep_until_tick(0.05)
    assert before < due <= loop.time()
    assert due == next_tick(before, 0.05)


@pytest.mark.asyncio
async def test_a_ticker_sleeps_to_the_tick_unless_woken() -> None:
    loop = asyncio.get_running_loop()
    ticks = Ticker()
    before = loop.time()
    await ticks.sleep(0.05)
    assert loop.time() >= next_tick(before, 0.05) - RESOLUTION_S
    before = loop.time()
    loop.call_later(0.01, ticks.wake)
    await ticks.sleep(30.0)  # a long idle period, cut short
    assert loop.time() - before < 5.0


@pytest.mark.asyncio
async def test_a_wake_before_the_sleep_is_not_lost_and_counts_once() -> None:
    loop = asyncio.get_running_loop()
    ticks = Ticker()
    ticks.wake()  # e.g. a member joined while the check was running
    before = loop.time()
    await ticks.sleep(30.0)
    assert loop.time() - before < 5.0
    before = loop.time()
    await ticks.sleep(0.05)  # the wake was used up: this one runs to its tick
    assert loop.time() >= next_tick(before, 0.05) - RESOLUTION_S
