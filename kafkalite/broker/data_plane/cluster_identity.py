"""Who this broker is, in which cluster, and which broker it names as the controller.

What Metadata and DescribeCluster tell clients about the cluster as a whole, kept in one
place so that both answer alike.

Admin clients send controller requests (CreateTopics, DeleteTopics, the config changes...)
to the broker named ``controller_id``, and do not look elsewhere if it cannot be reached
(kafka-python's admin client fails with ECONNREFUSED). So the name must be a broker that
serves: the active controller (the quorum leader) while it is live, else a live broker,
which forwards those requests to the controller once there is one (Kafka's KRaft
brokers name a live broker too: clients never reach a KRaft controller directly). For
the same reason a broker this one found gone (a voter whose connection was refused or
reset: killed or stopped) is not listed until a new controller has fenced it, even while
the quorum elects a new leader: a client would pick it for its next request.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kafkalite.broker.control_plane_api import QuorumView
from kafkalite.metadata.image import BrokerRegistration, MetadataImage


@dataclass(frozen=True, slots=True)
class ClusterIdentity:
    cluster_id: str
    broker_id: int
    image: MetadataImage
    quorum_view: Callable[[], QuorumView]

    def controller_id(self) -> int:
        """The quorum leader while this broker is in contact with it and it is a live
        (registered, unfenced) broker; otherwise this broker if it is live, else the
        first live broker, else this broker (it serves, whatever the image says)."""
        return controller_for_clients(
            self.quorum_view(), self.image.live_broker_ids(), self.broker_id
        )

    def brokers_for_clients(self) -> list[BrokerRegistration]:
        """The brokers Metadata and DescribeCluster list (see
        ``MetadataImage.brokers_for_clients``), without the voters this broker has found
        gone: they stay registered and unfenced until a new controller fences them, and
        meanwhile a client would pick one for its next request and fail (kafka-python's
        admin client does not try another broker)."""
        gone = self.quorum_view().gone_voters
        return [
            b
            for b in self.image.brokers_for_clients(self.broker_id)
            if b.broker_id not in gone or b.broker_id == self.broker_id
        ]


def controller_for_clients(view: QuorumView, live: set[int], serving: int) -> int:
    """The broker to name as the controller (see the module docstring)."""
    if view.leader_reachable and view.leader_id in live:
        return view.leader_id
    if serving in live or not live:
        return serving
    return min(live)
