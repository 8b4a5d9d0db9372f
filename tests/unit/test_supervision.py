"""The task supervisor: an exception that ends a long-lived task is reported, once."""

from __future__ import annotations

import asyncio

import pytest

from kafkalite.supervision import TaskSupervisor

pytestmark = [pytest.mark.unit, pytest.mark.asyncio]


async def test_a_task_that_raises_is_reported_and_a_cancelled_or_finished_one_is_not() -> None:
    deaths: list[tuple[str, BaseException]] = []
    supervisor = TaskSupervisor(lambda task, exc: deaths.append((task, exc)))

    async def fails() -> None:
        raise OSError("disk gone")

    async def finishes() -> None:
        return None

    async def runs_forever() -> None:
        await asyncio.Event().wait()

    failing = supervisor.spawn(fails(), "replica-fetcher-2")
    finishing = supervisor.spawn(finishes(), "fence-check")
    forever = supervisor.spawn(runs_forever(), "isr-check")
    await asyncio.wait({failing, finishing})
    forever.cancel()
    await asyncio.wait({forever})
    await asyncio.sleep(0)  # done callbacks run on the next loop iteration
    assert [(task, type(exc)) for task, exc in deaths] == [("replica-fetcher-2", OSError)]
