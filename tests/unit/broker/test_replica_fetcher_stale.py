"""A partition this broker stopped following (its topic deleted, a new leader) while its
fetcher still held it must not spin the fetcher without yielding.

Seen before the fix: a topic created and deleted at once (a student's cell, or
``test_admin_propagation``) left a follower's fetcher holding the deleted partition in its
truncation state; each round found nothing to ask, reported progress and went round again
without awaiting anything, so the broker's event loop never ran anything else. The broker
answered no client and never applied the metadata sync that would have dropped the
partition, while its control plane kept it registered: a zombie.
"""

from __future__ import annotations

import asyncio

import pytest

from tests.unit.broker.fetcher_fakes import follower_fetcher

pytestmark = [pytest.mark.unit, pytest.mark.timeout(30)]


def test_a_partition_no_longer_followed_leaves_the_loop_free() -> None:
    async def scenario() -> int:
        # never reached; the replica manager no longer has the partition
        fetcher = follower_fetcher(connection=None, replicas={})
        fetcher.set_partitions({("deleted", 0): 0})
        ticks = 0
        async with asyncio.timeout(5):
            for _ in range(20):  # the spinning fetcher never let one of these sleeps end
                await asyncio.sleep(0.01)
                ticks += 1
        fetcher._task.cancel()
        return ticks

    assert asyncio.run(scenario()) == 20
