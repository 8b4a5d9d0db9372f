"""``__consumer_offsets`` as the group coordinator sees it (see ``internal_topic``)."""

from __future__ import annotations

from kafkalite.broker.control_plane_api import Controller
from kafkalite.broker.data_plane.internal_topic import InternalTopic
from kafkalite.broker.data_plane.replica_manager import ReplicaManager
from kafkalite.coordinator.group.offsets_log import OFFSETS_TOPIC
from kafkalite.metadata.image import MetadataImage


class BrokerOffsetsTopic(InternalTopic):
    def __init__(
        self,
        image: MetadataImage,
        replicas: ReplicaManager,
        controller: Controller,
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
