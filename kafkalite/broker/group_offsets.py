"""``__consumer_offsets`` as the group coordinator sees it (see ``internal_topic``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkalite.broker.internal_topic import InternalTopic
from kafkalite.coordinator.group.offsets_log import OFFSETS_TOPIC

if TYPE_CHECKING:
    from kafkalite.broker.broker import Broker


class BrokerOffsetsTopic(InternalTopic):
    def __init__(self, broker: Broker) -> None:
        super().__init__(
            broker,
            OFFSETS_TOPIC,
            "offsets.topic.num.partitions",
            "offsets.topic.replication.factor",
            "offsets.topic.segment.bytes",
        )
