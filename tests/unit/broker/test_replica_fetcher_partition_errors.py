"""One partition's error never stops the other partitions fetched from the same leader.

Seen before the fix: a follower that could not append one partition's batch (a log start
inside a batch, issue 27) let the error out of the fetch loop; the partitions after it in
the same response were never appended, on every round, and fell out of their ISRs. Kafka's
``AbstractFetcherThread.processFetchRequest`` handles each partition's data on its own:
the failing one is logged and backed off, the others go on.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from types import SimpleNamespace
from typing import Any

import pytest

from kafkalite.storage.errors import CorruptRecordError
from tests.unit.broker.fetcher_fakes import empty_replica, follower_fetcher

pytestmark = [pytest.mark.unit, pytest.mark.timeout(30)]

BROKEN = ("broken", 0)
HEALTHY = ("healthy", 0)


class LeaderWithData:
    """A leader that answers every Fetch with one small batch for each partition, the
    broken one first; it counts the Fetches of each partition."""

    def __init__(self) -> None:
        self.fetched: dict[tuple[str, int], int] = defaultdict(int)

    async def request(self, body: Any, timeout_s: float, read: Any = None) -> Any:
        await asyncio.sleep(0.001)
        order = sorted(
            ((t.topic, int(p.partition)) for t in body.topics for p in t.partitions),
            key=lambda key: key != BROKEN,
        )
        for key in order:
            self.fetched[key] += 1
        return SimpleNamespace(
            responses=[
                SimpleNamespace(
                    topic=topic,
                    partitions=[
                        SimpleNamespace(
                            partition_index=index,
                            error_code=0,
                            records=b"batch",
                            high_watermark=1,
                            log_start_offset=0,
                        )
                    ],
                )
                for topic, index in order
            ]
        )


def test_a_partition_that_fails_to_append_leaves_the_others_fetching(
    caplog: pytest.LogCaptureFixture,
) -> None:
    appended: list[bytes] = []

    def refuse(records: bytes, high_watermark: int) -> int:
        raise CorruptRecordError("batch at offset 5, log ends at 7")

    def accept(records: bytes, high_watermark: int) -> int:
        appended.append(records)
        return len(records)

    broken, healthy = empty_replica(), empty_replica()
    broken.append_as_follower = refuse
    healthy.append_as_follower = accept

    async def scenario() -> LeaderWithData:
        leader = LeaderWithData()
        fetcher = follower_fetcher(leader, {BROKEN: broken, HEALTHY: healthy})
        fetcher.set_partitions({BROKEN: 0, HEALTHY: 0})
        try:
            async with asyncio.timeout(3):
                while len(appended) < 3 or leader.fetched[BROKEN] < 2:
                    await asyncio.sleep(0.01)
        except TimeoutError:
            pass
        fetcher._task.cancel()
        return leader

    with caplog.at_level(logging.WARNING, logger="kafkalite.broker.data_plane.replica_fetcher"):
        leader = asyncio.run(scenario())
    assert len(appended) >= 3, "the healthy partition stopped with the broken one"
    assert leader.fetched[BROKEN] >= 2, "the broken partition is tried again after its backoff"
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings and all("broken-0" in w for w in warnings)
    assert "batch at offset 5" in warnings[0]
