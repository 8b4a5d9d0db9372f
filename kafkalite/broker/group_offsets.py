"""``__consumer_offsets`` as the group coordinator sees it (see ``internal_topic``)."""

from __future__ import annotations

from kafkalite.broker.controller_channel import ControllerChannel
from kafkalite.broker.internal_topic import InternalTopic
from kafkalite.broker.replica_manager import ReplicaManager
from kafkalite.coordinator.group.offsets_log import OFFSETS_TOPIC
from kafkalite.metadata.image import MetadataImage


class BrokerOffsetsTopic(InternalTopic):
    def __init__(
        self,
        image: MetadataImage,
        replicas: ReplicaManager,
        controller: ControllerChannel,
        cluster_size: int,
    ) -> None:
        super().__init__(
            image,
            replicas,
            controller,
            OFFSETS_TOPIC,
            "offsets.topic.num.partitions",
            "offsets.topic.replication.factor",
            "offsets.topic.segment.bytes",
            cluster_size,
        )
