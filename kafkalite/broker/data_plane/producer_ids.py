"""Producer ids for InitProducerId, handed out from blocks the controller allocates.

A block is committed to the metadata log before any id in it is used, so an id is never
handed out twice, not even after a crash: a restarted broker asks for a fresh block.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from kafkalite.controller.producer_id_control import PRODUCER_ID_BLOCK_SIZE


class ProducerIdManager:
    """Hands out ids from the current block; ``allocate_block`` asks the controller for
    the next one (AllocateProducerIds) and returns its first id."""

    def __init__(self, allocate_block: Callable[[], Awaitable[int]]) -> None:
        self._allocate_block = allocate_block
        self._next = 0
        self._end = 0
        self._lock = asyncio.Lock()

    async def next_id(self) -> int:
        async with self._lock:
            if self._next >= self._end:
                start = await self._allocate_block()
                self._next, self._end = start, start + PRODUCER_ID_BLOCK_SIZE
            producer_id = self._next
            self._next += 1
            return producer_id
