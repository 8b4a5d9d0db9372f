"""The controller: the cluster's single writer of metadata.

Every operation validates a request against the controller's image and returns a
:class:`ControllerResult`: the records to append and the response to give once they are
committed. Nothing here mutates state directly; state changes only when committed records
are replayed (``MetadataImage.replay``), exactly like Kafka's ``QuorumController``. That
is what lets a new controller take over by replaying the same log.

As in Kafka, the work is split among control managers, one per concern, all reading the
same image:

- ``cluster_control``: brokers registering, heartbeating, fenced and unfenced;
- ``replication_control``: ISR changes, leader elections, reassignments;
- ``topic_control``: topics and partitions created and deleted;
- ``config_control``: dynamic settings of topics, brokers and groups;
- ``producer_id_control``: blocks of producer ids.

Single-threaded: one task on the control plane drives it; it does no I/O.
"""

from __future__ import annotations

from kafkalite.controller.cluster_control import ClusterControlManager
from kafkalite.controller.config_control import ConfigurationControlManager
from kafkalite.controller.producer_id_control import ProducerIdControlManager
from kafkalite.controller.replication_control import ReplicationControlManager
from kafkalite.controller.topic_control import TopicControlManager
from kafkalite.metadata.image import MetadataImage


class QuorumController:
    """The operations the controller service runs, each answered by its manager."""

    def __init__(self, image: MetadataImage) -> None:
        self.image = image
        self.replication = ReplicationControlManager(image)
        self.cluster = ClusterControlManager(image, self.replication)
        self.topics = TopicControlManager(image)
        self.configs = ConfigurationControlManager(image, self.replication)
        self.producer_ids = ProducerIdControlManager(image)

        self.register_broker = self.cluster.register_broker
        self.heartbeat = self.cluster.heartbeat
        self.fence_broker = self.cluster.fence_broker
        self.alter_partition = self.replication.alter_partition
        self.alter_partition_reassignments = self.replication.alter_partition_reassignments
        self.elect_leaders = self.replication.elect_leaders
        self.create_topics = self.topics.create_topics
        self.delete_topics = self.topics.delete_topics
        self.create_partitions = self.topics.create_partitions
        self.alter_configs = self.configs.alter_configs
        self.allocate_producer_ids = self.producer_ids.allocate_producer_ids
