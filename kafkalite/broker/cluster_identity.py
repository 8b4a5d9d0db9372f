"""Who this broker is, in which cluster, and which broker it names as the controller.

What Metadata and DescribeCluster tell clients about the cluster as a whole, kept in one
place so that both answer alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kafkalite.broker.raft_quorum import QuorumView
from kafkalite.metadata.image import MetadataImage


@dataclass(frozen=True, slots=True)
class ClusterIdentity:
    cluster_id: str
    broker_id: int
    image: MetadataImage
    quorum_view: Callable[[], QuorumView]

    def controller_id(self) -> int:
        """The active controller (the quorum leader); -1 during an election."""
        return self.quorum_view().leader_id
