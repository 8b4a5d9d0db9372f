"""How long a follower waits for its leader's answer: ``request.timeout.ms``, then it asks
again (on a new connection: ``PeerConnection`` drops one that left a request unanswered,
as Kafka's ``NetworkClient`` does; tests/integration/test_peer_frames.py).

A connection can go silent without being reset: its far end vanished (a container's
network torn down, a link that black-holes) while this side's socket stays open. Every
later request on it would time out too, and the follower would never fetch again: caught
up, running, and outside the ISR for good. But a slow answer is not a silent link: with
the lab's ``slow`` fault at 2.5 s or more each way, the 5 s the fetcher once allowed ran
out before any answer could come back, and the follower reconnected and asked again,
forever, never truncating.

On the virtual-time loop (``tests.support.virtual_time``): seconds of waiting, no real time.
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from kio.schema.offset_for_leader_epoch.v4.request import OffsetForLeaderEpochRequest

from kafkalite.network.client import PeerTimeoutError
from kafkalite.protocol.errors import ErrorCode
from tests.support import virtual_time
from tests.unit.broker.fetcher_fakes import empty_replica, follower_fetcher

pytestmark = pytest.mark.unit

KEY = ("orders", 0)


class SilentLink:
    """A connection whose first request times out; it records each request and reset (the
    fetcher resets nothing itself: the connection dropped itself at the timeout)."""

    def __init__(self) -> None:
        self.happened: list[str] = []

    async def request(self, body: Any, timeout_s: float, read: Any = None) -> Any:
        self.happened.append("request")
        if len(self.happened) == 1:
            raise PeerTimeoutError("127.0.0.1:1 did not answer in 15.0s")
        await asyncio.sleep(3600)  # held: the test ends first

    def reset(self) -> None:
        self.happened.append("reset")


def test_a_timed_out_fetch_is_asked_again() -> None:
    async def scenario() -> list[str]:
        link = SilentLink()
        fetcher = follower_fetcher(link, {KEY: empty_replica()})
        fetcher.set_partitions({KEY: 0})
        while link.happened.count("request") < 2:
            await asyncio.sleep(0.01)
        fetcher._task.cancel()
        return link.happened

    assert virtual_time.run(scenario()) == ["request", "request"]


class SlowLink:
    """A leader behind a link that delivers each way ``one_way_s`` late: an answer takes
    twice that, and a request whose timeout is shorter times out, as on a real
    connection (``PeerConnection``)."""

    def __init__(self, one_way_s: float) -> None:
        self.round_trip_s = 2 * one_way_s
        self.happened: list[str] = []

    async def request(self, body: Any, timeout_s: float, read: Any = None) -> Any:
        truncation = isinstance(body, OffsetForLeaderEpochRequest)
        self.happened.append("truncation" if truncation else "fetch")
        try:
            async with asyncio.timeout(timeout_s):
                await asyncio.sleep(self.round_trip_s if truncation else 3600)
        except TimeoutError:
            raise PeerTimeoutError(f"no answer in {timeout_s}s") from None
        self.happened.append("answered")
        answer = SimpleNamespace(
            partition=KEY[1], error_code=ErrorCode.none, leader_epoch=0, end_offset=10
        )
        return SimpleNamespace(topics=[SimpleNamespace(topic=KEY[0], partitions=[answer])])

    def reset(self) -> None:
        self.happened.append("reset")


def replica_with_records() -> Any:
    """A local replica of 10 records of epoch 0 that follows broker 1 in epoch 0."""
    truncated: list[int] = []
    return SimpleNamespace(
        leader=1,
        leader_epoch=0,
        log_end_offset=10,
        log_start_offset=0,
        high_watermark=10,
        log=SimpleNamespace(
            leader_epoch_cache=SimpleNamespace(
                latest_epoch=0, end_offset_for=lambda epoch, leo: (0, 10)
            )
        ),
        truncated=truncated,
        truncate_to=lambda offset: truncated.append(offset) or (10, 10),
    )


def test_a_leader_behind_a_slow_link_is_waited_for() -> None:
    """3 s each way: the truncation's answer comes after 6 s, well within
    ``request.timeout.ms``; then the follower fetches."""

    async def scenario() -> tuple[list[str], list[int]]:
        link = SlowLink(one_way_s=3.0)
        replica = replica_with_records()
        fetcher = follower_fetcher(link, {KEY: replica})
        fetcher.set_partitions({KEY: 0})
        await asyncio.sleep(20)  # with 5 s allowed, four tries and four resets
        fetcher._task.cancel()
        return link.happened, replica.truncated

    happened, truncated = virtual_time.run(scenario())
    assert happened == ["truncation", "answered", "fetch"], "asked again and again"
    assert truncated == [10]
