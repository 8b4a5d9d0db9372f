"""Producer ids come from blocks the controller allocates: consecutive within a block, a
new block only when one is used up, and never an id twice even when callers race."""

from __future__ import annotations

import asyncio

import pytest

from kafkalite.broker.data_plane.producer_ids import ProducerIdManager
from kafkalite.controller.producer_id_control import PRODUCER_ID_BLOCK_SIZE

pytestmark = [pytest.mark.unit, pytest.mark.asyncio]


async def test_ids_come_from_one_block_until_it_is_used_up() -> None:
    blocks: list[int] = []

    async def allocate_block() -> int:
        await asyncio.sleep(0)  # a round trip to the controller: other callers run meanwhile
        start = 5000 + len(blocks) * PRODUCER_ID_BLOCK_SIZE
        blocks.append(start)
        return start

    manager = ProducerIdManager(allocate_block)
    ids = await asyncio.gather(*(manager.next_id() for _ in range(PRODUCER_ID_BLOCK_SIZE + 1)))
    assert sorted(ids) == list(range(5000, 5000 + PRODUCER_ID_BLOCK_SIZE + 1))
    assert blocks == [5000, 5000 + PRODUCER_ID_BLOCK_SIZE]
