"""Producer ids for InitProducerId, handed out from blocks the controller allocates.

A block is committed to the metadata log before any id in it is used, so an id is never
handed out twice, not even after a crash: a restarted broker asks for a fresh block.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from kafkalite.controller.producer_id_control import PRODUCER_ID_BLOCK_SIZE

if TYPE_CHECKING:
    from kafkalite.broker.broker import Broker


class ProducerIdManager:
    def __init__(self, broker: Broker) -> None:
        self._broker = broker
        self._next = 0
        self._end = 0
        self._lock = asyncio.Lock()

    async def next_id(self) -> int:
        async with self._lock:
            if self._next >= self._end:
                start = await self._broker.controller.allocate_producer_ids(
                    self._broker.broker_id, self._broker.broker_epoch
                )
                self._next, self._end = start, start + PRODUCER_ID_BLOCK_SIZE
            producer_id = self._next
            self._next += 1
            return producer_id
