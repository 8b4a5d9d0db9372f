"""Leader discovery (KIP-951): where a refused Produce or Fetch should go instead.

From Produce v10 and Fetch v16 on, a partition answered NOT_LEADER_OR_FOLLOWER (and, for
Fetch, FENCED_LEADER_EPOCH) carries the leader this broker knows of, ``current_leader``
{leader_id, leader_epoch}, and the response lists that leader's endpoint in
``node_endpoints``: the client sends its next request there without first asking for
Metadata, which is the round trip the KIP removes. An unknown or fenced leader is
``-1`` with no endpoint, and the client falls back to a Metadata request.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kafkalite.metadata.image import BrokerRegistration, MetadataImage

PRODUCE_VERSION = 10
FETCH_VERSION = 16


@dataclass(slots=True)
class LeaderDiscovery:
    """The current leaders told in one response, and the endpoints of those that serve."""

    image: MetadataImage
    endpoints: dict[int, BrokerRegistration] = field(default_factory=dict)

    def current_leader(self, s: Any, topic: str, partition: int) -> Any:
        """``LeaderIdAndEpoch`` of the partition, remembering the leader's endpoint."""
        registration = self.image.partition(topic, partition)
        if registration is None:
            return s.LeaderIdAndEpoch(leader_id=-1, leader_epoch=-1)
        broker = self.image.brokers.get(registration.leader)
        if broker is not None and not broker.fenced:
            self.endpoints[broker.broker_id] = broker
        return s.LeaderIdAndEpoch(
            leader_id=registration.leader, leader_epoch=registration.leader_epoch
        )

    def node_endpoints(self, s: Any) -> tuple[Any, ...]:
        return tuple(
            s.NodeEndpoint(node_id=b.broker_id, host=b.host, port=b.port, rack=b.rack)
            for b in sorted(self.endpoints.values(), key=lambda b: b.broker_id)
        )
