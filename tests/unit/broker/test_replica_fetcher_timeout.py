"""A Fetch that times out drops its connection, as Kafka's fetcher does.

A connection can go silent without being reset: its far end vanished (a container's
network torn down, a link that black-holes) while this side's socket stays open. Every
later request on it would time out too, and the follower would never fetch again: caught
up, running, and outside the ISR for good.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kafkalite.network.client import PeerTimeoutError
from tests.unit.broker.fetcher_fakes import empty_replica, follower_fetcher

pytestmark = [pytest.mark.unit, pytest.mark.timeout(30)]

KEY = ("orders", 0)


class SilentLink:
    """A connection whose first request times out; it records each request and reset."""

    def __init__(self) -> None:
        self.happened: list[str] = []

    async def request(self, body: Any, timeout_s: float) -> Any:
        self.happened.append("request")
        if len(self.happened) == 1:
            raise PeerTimeoutError("127.0.0.1:1 did not answer in 15.0s")
        await asyncio.sleep(3600)  # held: the test ends first

    def reset(self) -> None:
        self.happened.append("reset")


def test_a_timed_out_fetch_is_asked_again_on_a_new_connection() -> None:
    async def scenario() -> list[str]:
        link = SilentLink()
        fetcher = follower_fetcher(link, {KEY: empty_replica()})
        fetcher.set_partitions({KEY: 0})
        async with asyncio.timeout(5):
            while link.happened.count("request") < 2:
                await asyncio.sleep(0.01)
        fetcher._task.cancel()
        return link.happened

    assert asyncio.run(scenario()) == ["request", "reset", "request"]
