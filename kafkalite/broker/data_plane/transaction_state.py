"""``__transaction_state`` as the transaction coordinator sees it (see ``internal_topic``).

Like Kafka's, the topic is created with ``min.insync.replicas`` =
``transaction.state.log.min.isr``, so a coordinator's decision is on at least that many
brokers before it acts. Its replication factor is capped by the cluster's brokers, not by
those alive at the moment: created while one broker is down, it would be left with fewer
replicas than ``min.insync.replicas`` tolerates losing, and one more failure would stop
every transaction. Until all can host a replica, creation fails and FindCoordinator answers
COORDINATOR_NOT_AVAILABLE (the client retries), as Kafka does.

The cluster's brokers are those of ``controller.quorum.voters`` (every Kafka-Lite broker is
a voter), known from the start - not only those registered in this broker's metadata
image, which learns of the others' registrations a little later. Counted from the image,
a cluster whose first FindCoordinator came early (under load, easily) got two replicas and
``min.insync.replicas`` 2: killing one of them then failed every write to the topic, each
EndTxn answered COORDINATOR_NOT_AVAILABLE until the producer gave up (_TIMED_OUT) or the
transaction timed out and its abort fenced the producer (_FENCED).
"""

from __future__ import annotations

from kafkalite.broker.control_plane_api import Controller
from kafkalite.broker.data_plane.internal_topic import InternalTopic
from kafkalite.broker.data_plane.replica_manager import ReplicaManager
from kafkalite.coordinator.transaction.transaction_log import TRANSACTION_STATE_TOPIC
from kafkalite.metadata.image import MetadataImage


class BrokerTransactionStateTopic(InternalTopic):
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
            TRANSACTION_STATE_TOPIC,
            "transaction.state.log.num.partitions",
            "transaction.state.log.replication.factor",
            "transaction.state.log.segment.bytes",
            cluster_size,
        )

    def replication_factor(self) -> int:
        """Every replica wanted, dead brokers or not (see the module docstring)."""
        return self.wanted_replicas()

    def topic_configs(self, replication_factor: int) -> dict[str, str | None]:
        min_isr = self.image.broker_int("transaction.state.log.min.isr")
        return super().topic_configs(replication_factor) | {
            "min.insync.replicas": str(min(min_isr, replication_factor))
        }
