"""Who the active controller is, as ``Cluster.status()`` reports it."""

from __future__ import annotations

from kafkalite.cluster import Cluster


def controller(cluster: Cluster) -> int | None:
    """The one broker that reports an active controller; None during an election."""
    found = [b["id"] for b in cluster.status()["brokers"] if b["controller"]]
    return found[0] if len(found) == 1 else None
