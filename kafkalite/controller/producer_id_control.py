"""Producer ids (Kafka's ``ProducerIdControlManager``): blocks handed to brokers, so every
idempotent or transactional producer gets an id no other broker hands out, across restarts."""

from __future__ import annotations

from kafkalite.controller.results import ControllerResult
from kafkalite.metadata.image import MetadataImage
from kafkalite.metadata.records import ProducerIdsRecord

PRODUCER_ID_BLOCK_SIZE = 1000


class ProducerIdControlManager:
    def __init__(self, image: MetadataImage) -> None:
        self.image = image

    def allocate_producer_ids(self, broker_id: int, broker_epoch: int) -> ControllerResult[int]:
        """Hand out the next block, so producer ids stay unique across brokers and restarts."""
        start = self.image.next_producer_id
        record = ProducerIdsRecord(broker_id, broker_epoch, start + PRODUCER_ID_BLOCK_SIZE)
        return ControllerResult([record], start)
