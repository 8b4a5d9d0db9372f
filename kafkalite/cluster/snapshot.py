"""One status snapshot of the whole cluster from each broker's own view (pure).

Partition-level fields (leader, epoch, ISR, HW, LSO) come from the leader's view, which
is authoritative; each replica row comes from the broker hosting it, so a student sees
each replica's own log end offset and high watermark side by side. A replica on a broker
that does not answer is still listed, with null offsets.
"""

from __future__ import annotations

from typing import Any

from kafkalite.cluster.backend import BrokerState
from kafkalite.cluster.spec import ClusterSpec


def merge_status(
    spec: ClusterSpec, states: dict[int, BrokerState], views: dict[int, dict[str, Any] | None]
) -> dict[str, Any]:
    brokers = [
        {
            "id": b.broker_id,
            "address": b.address,
            "state": states[b.broker_id].value,
            "controller": bool((views.get(b.broker_id) or {}).get("controller", False)),
        }
        for b in spec.brokers
    ]
    hosted: dict[tuple[str, int], dict[int, dict[str, Any]]] = {}
    for broker_id, view in views.items():
        for p in (view or {}).get("partitions", []):
            hosted.setdefault((p["topic"], p["partition"]), {})[broker_id] = p
    partitions = []
    for (topic, index), by_broker in sorted(hosted.items()):
        leader_view = next((p for b, p in by_broker.items() if p["leader"] == b), None)
        reference = leader_view or max(by_broker.values(), key=lambda p: p["leader_epoch"])
        replica_ids = reference["replicas"]
        partitions.append(
            {
                "topic": topic,
                "partition": index,
                "leader": reference["leader"] if leader_view else None,
                "leader_epoch": reference["leader_epoch"],
                "isr": reference["isr"],
                "high_watermark": leader_view["high_watermark"] if leader_view else None,
                "last_stable_offset": leader_view["last_stable_offset"] if leader_view else None,
                "log_start_offset": reference["log_start_offset"],
                "replicas": [
                    {
                        "broker": r,
                        "log_end_offset": by_broker[r]["log_end_offset"]
                        if r in by_broker
                        else None,
                        "high_watermark": by_broker[r]["high_watermark"]
                        if r in by_broker
                        else None,
                    }
                    for r in replica_ids
                ],
            }
        )
    return {"brokers": brokers, "partitions": partitions}
