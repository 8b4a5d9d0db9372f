"""A partition backing off after an error must not sit out a whole held Fetch.

Seen before the fix (CI, lab 03's grading and ``test_partition_admin``): a follower heard
of a new topic before its leader did, so the leader answered its first Fetch of the topic
UNKNOWN_TOPIC_OR_PARTITION. The partition backed off 50 ms, and the next Fetch, without it,
was held at the leader for ``replica.fetch.wait.max.ms`` (10 s): the follower left the new
topic's ISR after ``replica.lag.time.max.ms`` (1 s), and an acks=all write to it failed
with NOT_ENOUGH_REPLICAS_AFTER_APPEND.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from types import SimpleNamespace
from typing import Any

import pytest

from kafkalite.broker.data_plane.replica_fetcher import held_fetch_wait_ms
from kafkalite.protocol.codec import millis
from kafkalite.protocol.errors import ErrorCode
from tests.unit.broker.fetcher_fakes import empty_replica, follower_fetcher

pytestmark = [pytest.mark.unit, pytest.mark.timeout(30)]

OLD = ("old", 0)
NEW = ("new", 0)
LAG_MAX_S = 1.0
"""``replica.lag.time.max.ms``: the new partition must be fetched again within it."""


def test_the_wait_ends_when_the_first_backoff_does() -> None:
    assert held_fetch_wait_ms(10_000, [], now=100.0) == 10_000
    assert held_fetch_wait_ms(10_000, [99.0], now=100.0) == 10_000  # already due
    assert held_fetch_wait_ms(10_000, [100.05, 100.2], now=100.0) == 50
    assert held_fetch_wait_ms(30, [100.05], now=100.0) == 30


class LeaderLearningLate:
    """A leader that does not know NEW at its first Fetch, and holds every other Fetch
    its whole ``max_wait``: nothing new is written to either partition."""

    def __init__(self) -> None:
        self.fetched_at: dict[tuple[str, int], list[float]] = defaultdict(list)

    async def request(self, body: Any, timeout_s: float, read: Any = None) -> Any:
        loop = asyncio.get_running_loop()
        asked = [(t.topic, int(p.partition)) for t in body.topics for p in t.partitions]
        for key in asked:
            self.fetched_at[key].append(loop.time())
        unknown = NEW in asked and len(self.fetched_at[NEW]) == 1
        if not unknown:
            await asyncio.sleep(millis(body.max_wait) / 1000)
        by_topic: dict[str, list[Any]] = defaultdict(list)
        for topic, index in asked:
            error = ErrorCode.unknown_topic_or_partition if unknown and (topic, index) == NEW else 0
            by_topic[topic].append(
                SimpleNamespace(
                    partition_index=index,
                    error_code=error,
                    records=b"",
                    high_watermark=0,
                    log_start_offset=0,
                )
            )
        return SimpleNamespace(
            responses=[SimpleNamespace(topic=t, partitions=ps) for t, ps in by_topic.items()]
        )


def test_a_partition_refused_once_is_fetched_again_within_the_lag_allowed() -> None:
    async def scenario() -> list[float]:
        leader = LeaderLearningLate()
        fetcher = follower_fetcher(leader, {OLD: empty_replica(), NEW: empty_replica()})
        fetcher.set_partitions({OLD: 0, NEW: 0})
        try:
            async with asyncio.timeout(3 * LAG_MAX_S):
                while len(leader.fetched_at[NEW]) < 2:
                    await asyncio.sleep(0.01)
        except TimeoutError:
            pass
        fetcher._task.cancel()
        return leader.fetched_at[NEW]

    first, *again = asyncio.run(scenario())
    assert again, "the refused partition was not fetched again while the next Fetch was held"
    assert again[0] - first < LAG_MAX_S
