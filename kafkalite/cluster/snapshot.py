"""One status snapshot of the whole cluster from each broker's own view (pure).

Partition-level fields (leader, epoch, ISR, HW, LSO, open and aborted transactions) come
from the leader's view, which is authoritative; each replica row comes from the broker
hosting it, so a student sees each replica's own log end offset and high watermark side by
side. A replica on a broker that does not answer is still listed, with null offsets and
its broker's state (``dead``, ``paused``, ...). Each broker row says how late its event
loop runs (``loop_lag_ms``: a busy broker is not a dead one), the delay ``slow`` put on it
(``slow_ms``, null when not slowed), whether a partial partition cut it from its
replication peers (``partial_partition``), and, as the active controller sees it, how long
the broker has been silent (``silent_ms``) against the session that fences a silent broker
(``session_ms``; both null during an election); each partition lists its producers'
state as its leader keeps it.
"""

from __future__ import annotations

from typing import Any

from kafkalite.cluster.backend import BrokerState
from kafkalite.cluster.spec import ClusterSpec


def merge_status(
    spec: ClusterSpec,
    states: dict[int, BrokerState],
    views: dict[int, dict[str, Any] | None],
    slow_ms: dict[int, int] | None = None,
    partially_partitioned: set[int] | None = None,
) -> dict[str, Any]:
    judge = _active_controller(views)
    silences = judge.get("broker_silence_ms") or {}
    brokers = [
        {
            "id": b.broker_id,
            "address": b.address,
            "state": states[b.broker_id].value,
            "controller": bool((views.get(b.broker_id) or {}).get("controller", False)),
            "loop_lag_ms": (views.get(b.broker_id) or {}).get("loop_lag_ms"),
            "slow_ms": (slow_ms or {}).get(b.broker_id),
            "silent_ms": silences.get(str(b.broker_id)),
            "session_ms": judge.get("broker_session_timeout_ms"),
            "partial_partition": b.broker_id in (partially_partitioned or set()),
        }
        for b in spec.brokers
    ]
    hosted: dict[tuple[str, int], dict[int, dict[str, Any]]] = {}
    for broker_id, view in views.items():
        for p in (view or {}).get("partitions", []):
            hosted.setdefault((p["topic"], p["partition"]), {})[broker_id] = p
    partitions = []
    for (topic, index), by_broker in sorted(hosted.items()):
        claims = [p for b, p in by_broker.items() if p["leader"] == b]
        # an isolated old leader may still think it leads: the newest epoch is the leader
        leader_view = max(claims, key=lambda p: p["leader_epoch"]) if claims else None
        reference = leader_view or max(by_broker.values(), key=lambda p: p["leader_epoch"])
        replica_ids = reference["replicas"]
        partitions.append(
            {
                "topic": topic,
                "topic_id": reference.get("topic_id"),
                "partition": index,
                "leader": reference["leader"] if leader_view else None,
                "leader_epoch": reference["leader_epoch"],
                "isr": reference["isr"],
                "high_watermark": leader_view["high_watermark"] if leader_view else None,
                "last_stable_offset": leader_view["last_stable_offset"] if leader_view else None,
                "open_transactions": leader_view.get("open_transactions", [])
                if leader_view
                else [],
                "aborted_transactions": (
                    leader_view.get("aborted_transactions", []) if leader_view else []
                ),
                "log_start_offset": reference["log_start_offset"],
                "adding_replicas": reference.get("adding_replicas", []),
                "removing_replicas": reference.get("removing_replicas", []),
                "producers": leader_view.get("producers", []) if leader_view else [],
                "replicas": [
                    _replica_row(r, by_broker.get(r), reference["isr"], states) for r in replica_ids
                ],
            }
        )
    return {
        "brokers": brokers,
        "partitions": partitions,
        "quorum": _quorum(views),
        "transactions": _newest_coordinators(views, "transactions", "transactional_id"),
        "groups": _newest_coordinators(views, "groups", "group"),
    }


def _newest_coordinators(
    views: dict[int, dict[str, Any] | None], field: str, key: str
) -> list[dict[str, Any]]:
    """Every transactional id (``field`` "transactions") or group ("groups") as its
    coordinator reports it; if two brokers claim one (an isolated old coordinator), the
    newer coordinator epoch is the coordinator."""
    newest: dict[str, dict[str, Any]] = {}
    for view in views.values():
        for item in (view or {}).get(field, []):
            seen = newest.get(item[key])
            if seen is None or _epoch(item) > _epoch(seen):
                newest[item[key]] = item
    return [newest[k] for k in sorted(newest)]


def _epoch(coordinated: dict[str, Any]) -> int:
    """A coordinator's epoch (-1 while it has not loaded the partition)."""
    epoch = coordinated.get("coordinator_epoch")
    return -1 if epoch is None else int(epoch)


def _replica_row(
    broker_id: int,
    own_view: dict[str, Any] | None,
    isr: list[int],
    states: dict[int, BrokerState],
) -> dict[str, Any]:
    """One replica as its own broker sees it: its log's offsets and the leader epoch it
    knows (an isolated or returning replica may still know an old one); ``in_isr`` is the
    authoritative view (the leader's), ``state`` its broker's (running, paused, dead...)."""

    def own(field: str) -> Any:
        return own_view[field] if own_view is not None else None

    state = states.get(broker_id)
    return {
        "broker": broker_id,
        "state": state.value if state is not None else None,
        "in_isr": broker_id in isr,
        "leader_epoch": own("leader_epoch"),
        "log_start_offset": own("log_start_offset"),
        "log_end_offset": own("log_end_offset"),
        "high_watermark": own("high_watermark"),
    }


def _active_controller(views: dict[int, dict[str, Any] | None]) -> dict[str, Any]:
    """The view of the broker whose controller is active ({} during an election): only
    it judges liveness."""
    return next((v for v in views.values() if v and v.get("controller")), {})


def _quorum(views: dict[int, dict[str, Any] | None]) -> dict[str, Any] | None:
    """The metadata quorum as its leader reports it (only the leader knows each voter's
    log end offset); lag is how far each voter's log is behind the leader's."""
    reported = [v["quorum"] for v in views.values() if v and v.get("quorum")]
    leaders = [q for q in reported if q.get("voters") is not None]
    if not leaders:
        if not reported:
            return None
        newest = max(reported, key=lambda q: q["epoch"])
        return {
            "leader": newest["leader"] if newest["leader"] >= 0 else None,
            "epoch": newest["epoch"],
            "high_watermark": None,
            "voters": [],
        }
    q = max(leaders, key=lambda q: q["epoch"])
    end = q["log_end_offset"]
    return {
        "leader": q["leader"],
        "epoch": q["epoch"],
        "high_watermark": q["high_watermark"],
        "voters": [
            {
                "id": v["id"],
                "log_end_offset": v["log_end_offset"],
                "lag": max(0, end - v["log_end_offset"]) if v["log_end_offset"] >= 0 else None,
            }
            for v in q["voters"]
        ],
    }
