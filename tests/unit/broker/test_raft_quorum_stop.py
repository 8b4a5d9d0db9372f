"""The quorum driver stops when asked, however busy it is.

Python 3.11's ``asyncio.wait_for`` swallowed a cancellation that arrived just as the
awaited event fired; the driver's loop waits on such an event after every message, so a
busy controller's ``stop`` could wait forever and the supervisor had to SIGKILL it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from kafkalite.supervision import TaskSupervisor
from tests.unit.broker.single_voter import single_voter_quorum

pytestmark = [pytest.mark.unit, pytest.mark.asyncio]


async def test_a_quorum_woken_by_every_message_still_stops(tmp_path: Path) -> None:
    quorum = single_voter_quorum(tmp_path)
    quorum.start(TaskSupervisor(lambda task, exc: None).spawn)
    async with asyncio.timeout(5):
        while not quorum.is_active:
            await asyncio.sleep(0.01)

    async def messages_arriving() -> None:
        """What a stream of quorum messages does to the driver: wake it every iteration."""
        while True:
            quorum.wake()
            await asyncio.sleep(0)

    traffic = asyncio.create_task(messages_arriving())
    try:
        stopping = asyncio.create_task(quorum.stop())
        done, _ = await asyncio.wait({stopping}, timeout=2)
        assert done, "stop did not return within 2 s"
    finally:
        traffic.cancel()
