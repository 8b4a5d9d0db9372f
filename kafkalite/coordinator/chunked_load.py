"""Replaying a coordinator's partition in chunks, yielding to the event loop between them.

The broker runs on one event loop: replaying a big ``__transaction_state`` or
``__consumer_offsets`` partition in one go would stall every other request, heartbeat and
replica fetch of the broker until it is done. So the first chunk is replayed at once (a
small partition - the usual case - is served without any client having to retry), and
the rest in a task, one chunk per loop iteration, while ``PartitionLoads`` answers
COORDINATOR_LOAD_IN_PROGRESS for the partition's keys. A load stops by itself when it is
superseded (leadership lost, or a newer epoch's load began).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

from kafkalite.coordinator.partition_loads import LogChunk, PartitionLoads
from kafkalite.protocol.errors import KafkaError

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ChunkedLoad:
    """One partition's load in one leader epoch; the coordinator supplies the reading,
    the replaying and what to do once loaded (resume markers, emit the event)."""

    loads: PartitionLoads
    partition: int
    epoch: int
    read: Callable[[int], LogChunk]
    """The chunk at an offset (raises KafkaError when the replica is gone)."""
    replay: Callable[[LogChunk], None]
    still_led: Callable[[], bool]
    on_loaded: Callable[[], None]
    on_failed: Callable[[], None]

    def begin(self) -> asyncio.Task[None] | None:
        """Replay the first chunk now; the task replaying the rest, None if that was all.
        Raises KafkaError if the first read fails (the caller resigns)."""
        self.loads.begin_loading(self.partition, self.epoch)
        chunk = self.read(0)
        self.replay(chunk)
        if chunk.is_last:
            self._complete()
            return None
        return asyncio.create_task(self._load_rest(chunk.next_offset))

    async def _load_rest(self, position: int) -> None:
        while True:
            await asyncio.sleep(0)
            if not (self.loads.is_loading(self.partition, self.epoch) and self.still_led()):
                return  # resigned, or a newer epoch's load took over
            try:
                chunk = self.read(position)
            except KafkaError as exc:
                log.info("loading partition %d stopped: %s", self.partition, exc)
                self.on_failed()
                return
            self.replay(chunk)
            if chunk.is_last:
                self._complete()
                return
            position = chunk.next_offset

    def _complete(self) -> None:
        self.loads.complete_loading(self.partition, self.epoch)
        self.on_loaded()
