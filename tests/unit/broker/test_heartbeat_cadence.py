"""A broker keeps heartbeating at its interval however slowly the controller answers.

The controller counts a heartbeat when it arrives but answers it only after the
operations queued ahead of it have committed (seconds, on a CPU-starved machine). Seen
before the fix: with three heartbeats unanswered the broker skipped the next ones, so its
heartbeats arrived only as often as answers came back, and a busy controller fenced live
brokers (``test_a_starved_three_broker_cluster_fences_no_live_broker`` in CI).
"""

from __future__ import annotations

import asyncio
import contextlib
from types import SimpleNamespace
from typing import Any

import pytest

from kafkalite.broker.control_plane.lifecycle import MAX_HEARTBEATS_IN_FLIGHT, BrokerLifecycle
from tests.support import virtual_time

pytestmark = pytest.mark.unit

INTERVAL_MS = 20


class SilentController:
    """Receives heartbeats and never answers them (a controller busy committing)."""

    def __init__(self) -> None:
        image = SimpleNamespace(broker_int=lambda name: INTERVAL_MS)
        self.service = SimpleNamespace(image=image)
        self.sent = 0
        self.waiting = 0
        self.most_waiting = 0

    async def heartbeat(self, *args: Any, **kwargs: Any) -> None:
        self.sent += 1
        self.waiting += 1
        try:
            await asyncio.sleep(0)  # an abandoned heartbeat has ended by the next one
            self.most_waiting = max(self.most_waiting, self.waiting)
            await asyncio.Event().wait()
        finally:
            self.waiting -= 1


def test_unanswered_heartbeats_do_not_hold_up_the_next() -> None:
    async def scenario() -> SilentController:
        controller = SilentController()
        lifecycle = BrokerLifecycle(
            broker_id=2,
            advertised=("127.0.0.1", 9092),
            rack=None,
            controller=controller,  # type: ignore[arg-type]
            control_plane=SimpleNamespace(),  # type: ignore[arg-type]  # not used here
            spawn=lambda coro, name: asyncio.create_task(coro, name=name),
            applied_end_offset=lambda: 1,
        )
        loop = asyncio.create_task(lifecycle._heartbeat_loop())
        await asyncio.sleep(40 * INTERVAL_MS / 1000 + 0.001)
        loop.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await loop
        return controller

    controller = virtual_time.run(scenario())  # 40 intervals of the loop's virtual time
    assert controller.sent >= 39, f"only {controller.sent} heartbeats in 40 intervals"
    assert controller.most_waiting <= MAX_HEARTBEATS_IN_FLIGHT, "unanswered ones are abandoned"
