"""The purgatory: a waiter completes on the notify that makes its condition true, checking
it once per wake-up; it waits on through notifies that do not; its deadline ends it with
the condition's value; however it ends, it is no longer registered."""

from __future__ import annotations

import asyncio
import time

import pytest

from kafkalite.broker.data_plane.purgatory import Purgatory

pytestmark = pytest.mark.unit
KEY = ("t", 0)


class Condition:
    """A condition that counts how often it is checked."""

    def __init__(self) -> None:
        self.value = False
        self.checks = 0

    def __call__(self) -> bool:
        self.checks += 1
        return self.value


async def parked(
    purgatory: Purgatory, condition: Condition, timeout_s: float
) -> asyncio.Task[bool]:
    task = asyncio.create_task(purgatory.wait_until([KEY, ("t", 1)], condition, timeout_s))
    while condition.checks == 0:
        await asyncio.sleep(0)
    await asyncio.sleep(0)
    return task


def test_a_notify_that_completes_the_wait_checks_the_condition_once() -> None:
    async def run() -> None:
        purgatory, condition = Purgatory(), Condition()
        task = await parked(purgatory, condition, 30)
        purgatory.notify(KEY)  # not yet true: it waits on
        await asyncio.sleep(0)
        assert not task.done()
        assert condition.checks == 2
        condition.value = True
        purgatory.notify(("t", 1))
        assert await task
        assert condition.checks == 3  # the first check, then one per wake-up
        assert not purgatory._waiters

    asyncio.run(run())


def test_the_deadline_ends_the_wait_with_the_conditions_value() -> None:
    async def run() -> None:
        purgatory, condition = Purgatory(), Condition()
        assert not await purgatory.wait_until([KEY], condition, 0.01)
        assert not purgatory._waiters
        assert await purgatory.wait_until([KEY], lambda: True, 0)

    asyncio.run(run())


def test_a_cancelled_wait_is_no_longer_registered() -> None:
    async def run() -> None:
        purgatory, condition = Purgatory(), Condition()
        task = await parked(purgatory, condition, 30)
        assert set(purgatory._waiters) == {KEY, ("t", 1)}
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not purgatory._waiters
        purgatory.notify(KEY)  # nobody left to wake

    asyncio.run(run())


def test_a_notify_and_the_deadline_in_one_pass_end_the_wait_once_with_the_condition() -> None:
    """The deadline passes after a notify woke the waiter but before the waiter ran: one
    end, with the condition's value (true: at the notify's wake-up; false: at the
    timer's, one check later)."""

    async def run() -> None:
        for value in (True, False):
            purgatory, condition = Purgatory(), Condition()
            task = await parked(purgatory, condition, 0.05)
            condition.value = value
            purgatory.notify(KEY)
            time.sleep(0.1)  # the deadline passes before the loop runs the waiter again
            assert await task is value
            assert condition.checks == (2 if value else 3)
            assert not purgatory._waiters

    asyncio.run(run())


def test_every_waiter_of_a_key_is_woken_and_a_raising_condition_unregisters() -> None:
    async def run() -> None:
        purgatory = Purgatory()
        conditions = [Condition() for _ in range(3)]
        tasks = [await parked(purgatory, c, 30) for c in conditions]
        for c in conditions:
            c.value = True
        purgatory.notify(KEY)
        assert await asyncio.gather(*tasks) == [True, True, True]

        def broken() -> bool:
            if purgatory._waiters:
                raise RuntimeError("log gone")
            return False

        waiting = asyncio.create_task(purgatory.wait_until([KEY], broken, 30))
        await asyncio.sleep(0)
        purgatory.notify(KEY)
        with pytest.raises(RuntimeError):
            await waiting
        assert not purgatory._waiters

    asyncio.run(run())


def test_a_wait_cancelled_after_its_wake_up_is_cancelled_and_unregistered() -> None:
    """Its request's connection closed between the notify and the waiter's turn."""

    async def run() -> None:
        purgatory, condition = Purgatory(), Condition()
        task = await parked(purgatory, condition, 30)
        condition.value = True
        purgatory.notify(KEY)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not purgatory._waiters

    asyncio.run(run())
