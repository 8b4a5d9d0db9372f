"""A stopped fetcher manager starts no fetcher again.

A controlled shutdown moves the stopping broker's leaderships to others; the records
that say so are committed while it stops and replayed afterwards, and each asks the
manager to sync its fetchers. One such sync started a fetcher after the manager had
stopped; it wrote to a log already closed (EBADF), its task died, and the broker halted
with exit code 70 instead of stopping cleanly (the course-stack CI, 2026-11-28).
"""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from kafkalite.broker.data_plane.replica_fetcher import ReplicaFetcherManager
from kafkalite.metadata.image import MetadataImage
from tests.unit.broker.fetcher_fakes import REQUEST_TIMEOUT_MS, empty_replica

pytestmark = [pytest.mark.unit, pytest.mark.timeout(30)]


def manager(replicas: dict[Any, Any]) -> ReplicaFetcherManager:
    """Broker 2's fetcher manager; broker 1's endpoint is given, no broker answers."""
    return ReplicaFetcherManager(
        broker_id=2,
        replicas=SimpleNamespace(partitions=replicas),  # type: ignore[arg-type]
        image=MetadataImage(),
        emit=lambda *args, **fields: None,
        spawn=lambda coro, name: asyncio.create_task(coro, name=name),
        request_timeout_ms=REQUEST_TIMEOUT_MS,
        endpoint_overrides="1@127.0.0.1:1",
    )


def test_a_leadership_replayed_after_the_stop_starts_no_fetcher() -> None:
    async def scenario() -> tuple[list[int], list[int]]:
        replicas: dict[Any, Any] = {}
        fetchers = manager(replicas)
        replicas[("orders", 0)] = empty_replica()  # follows broker 1
        fetchers.schedule_sync()
        await asyncio.sleep(0)
        before = sorted(fetchers.fetchers)
        await fetchers.stop()
        replicas[("clicks", 0)] = empty_replica()  # a leader moved here while stopping
        fetchers.schedule_sync()
        await asyncio.sleep(0)
        return before, sorted(fetchers.fetchers)

    before, after = asyncio.run(scenario())
    assert before == [1]
    assert after == []
