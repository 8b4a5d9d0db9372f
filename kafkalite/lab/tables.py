"""The cluster as pandas DataFrames, built from a ``Cluster.status()`` snapshot (pure).

Columns carry Kafka's own names (``log_end_offset``, ``high_watermark``,
``last_stable_offset``, ``leader_epoch``, ``in_isr``) so what a student reads in a table
is what Kafka's documentation and the lecture call it. A replica on a broker that does
not answer (dead, stopped, paused) keeps its row, with missing offsets.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

import pandas as pd

from kafkalite.lab.group_members import GroupView

REPLICA_COLUMNS = [
    "topic",
    "partition",
    "broker",
    "state",
    "leader",
    "in_isr",
    "leader_epoch",
    "log_end_offset",
    "high_watermark",
    "last_stable_offset",
    "lag",
]
PARTITION_COLUMNS = [
    "topic",
    "partition",
    "leader",
    "leader_epoch",
    "isr",
    "replicas",
    "log_start_offset",
    "high_watermark",
    "last_stable_offset",
]
TRANSACTION_COLUMNS = [
    "transactional_id",
    "state",
    "producer_id",
    "producer_epoch",
    "partitions",
    "coordinator",
    "timeout_ms",
]
GROUP_COLUMNS = ["group", "topic", "partition", "committed_offset", "high_watermark", "lag"]
EVENT_COLUMNS = ["time", "broker", "type", "details"]
CREATION_REPORTS_WITHIN_MS = 5_000
"""Every broker reports a topic's creation as it applies it: within this of the others."""
EVENT_ENVELOPE = ("seq", "time_ms", "broker", "type", "replay")


def _nullable_int(values: Iterable[int | None]) -> pd.Series:
    return pd.Series(list(values), dtype="Int64")


def brokers_frame(status: Mapping[str, Any]) -> pd.DataFrame:
    rows = [
        {
            "broker": b["id"],
            "address": b["address"],
            "state": b["state"],
            "controller": b["controller"],
        }
        for b in status["brokers"]
    ]
    return pd.DataFrame(rows, columns=["broker", "address", "state", "controller"])


def _topics(status: Mapping[str, Any], topic: str | None) -> list[dict[str, Any]]:
    return [p for p in status["partitions"] if topic is None or p["topic"] == topic]


def replicas_frame(status: Mapping[str, Any], topic: str | None = None) -> pd.DataFrame:
    """One row per replica: its own log end offset and high watermark as its broker reports
    them, the partition's last stable offset (the leader's), ISR membership, and how many
    records it lags behind the leader's log end."""
    states = {b["id"]: b["state"] for b in status["brokers"]}
    rows = []
    for p in _topics(status, topic):
        leader_leo = next(
            (r["log_end_offset"] for r in p["replicas"] if r["broker"] == p["leader"]), None
        )
        for r in p["replicas"]:
            leo = r["log_end_offset"]
            rows.append(
                {
                    "topic": p["topic"],
                    "partition": p["partition"],
                    "broker": r["broker"],
                    "state": r.get("state", states.get(r["broker"], "unknown")),
                    "leader": r["broker"] == p["leader"],
                    "in_isr": r.get("in_isr", r["broker"] in p["isr"]),
                    "leader_epoch": r.get("leader_epoch", p["leader_epoch"]),
                    "log_end_offset": leo,
                    "high_watermark": r["high_watermark"],
                    "last_stable_offset": p["last_stable_offset"],
                    "lag": None if leo is None or leader_leo is None else leader_leo - leo,
                }
            )
    frame = pd.DataFrame(rows, columns=REPLICA_COLUMNS)
    for column in ("leader_epoch", "log_end_offset", "high_watermark", "last_stable_offset", "lag"):
        frame[column] = _nullable_int(frame[column])
    return frame


def partitions_frame(status: Mapping[str, Any], topic: str | None = None) -> pd.DataFrame:
    rows = [
        {
            "topic": p["topic"],
            "partition": p["partition"],
            "leader": p["leader"],
            "leader_epoch": p["leader_epoch"],
            "isr": list(p["isr"]),
            "replicas": [r["broker"] for r in p["replicas"]],
            "log_start_offset": p["log_start_offset"],
            "high_watermark": p["high_watermark"],
            "last_stable_offset": p["last_stable_offset"],
        }
        for p in _topics(status, topic)
    ]
    frame = pd.DataFrame(rows, columns=PARTITION_COLUMNS)
    for column in ("leader", "high_watermark", "last_stable_offset"):
        frame[column] = _nullable_int(frame[column])
    return frame


def transactions_frame(status: Mapping[str, Any]) -> pd.DataFrame:
    """The transaction coordinators' view: each ``transactional.id``, its state (Ongoing,
    PrepareCommit, CompleteCommit, ...), its producer id and epoch, its partitions."""
    rows = [
        {column: t.get(column) for column in TRANSACTION_COLUMNS}
        for t in status.get("transactions") or []
    ]
    return pd.DataFrame(rows, columns=TRANSACTION_COLUMNS)


def groups_frame(
    committed: Mapping[str, Mapping[tuple[str, int], int]], status: Mapping[str, Any]
) -> pd.DataFrame:
    """Each group's committed offset per partition against the partition's high watermark:
    ``lag`` is how many committed records the group has not consumed yet."""
    high = {(p["topic"], p["partition"]): p["high_watermark"] for p in status["partitions"]}
    rows = []
    for group, offsets in sorted(committed.items()):
        for (topic, partition), offset in sorted(offsets.items()):
            hw = high.get((topic, partition))
            rows.append(
                {
                    "group": group,
                    "topic": topic,
                    "partition": partition,
                    "committed_offset": offset,
                    "high_watermark": hw,
                    "lag": None if hw is None else max(0, hw - offset),
                }
            )
    frame = pd.DataFrame(rows, columns=GROUP_COLUMNS)
    for column in ("high_watermark", "lag"):
        frame[column] = _nullable_int(frame[column])
    return frame


def events_frame(
    events: Iterable[Mapping[str, Any]],
    types: Iterable[str] | None = None,
    include_replay: bool = False,
) -> pd.DataFrame:
    """Events in time order; ``details`` holds each event's own fields as ``name=value``.
    Events a starting broker re-emits while replaying its metadata are left out unless
    ``include_replay``: they are history, not news."""
    wanted = set(types) if types is not None else None
    rows = []
    for e in events:
        if e.get("replay") and not include_replay:
            continue
        if wanted is not None and e["type"] not in wanted:
            continue
        details = ", ".join(f"{k}={v}" for k, v in e.items() if k not in EVENT_ENVELOPE)
        rows.append(
            {
                "time": datetime.fromtimestamp(e["time_ms"] / 1000),  # local, as a clock shows
                "broker": e["broker"],
                "type": str(e["type"]),
                "details": details,
            }
        )
    return pd.DataFrame(rows, columns=EVENT_COLUMNS)


def current_incarnation(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One topic's events from its latest creation on (``topic_created``; the brokers
    report it once each), so a lab run again on a topic it re-created shows only this run."""
    created = [
        e["time_ms"] for e in events if e.get("type") == "topic_created" and not e.get("replay")
    ]
    if not created:
        return events
    # each broker reports the creation when it replays it: within moments of each other
    since = max(created) - CREATION_REPORTS_WITHIN_MS
    return [e for e in events if e["time_ms"] >= since]


MEMBER_COLUMNS = ["client_id", "group_instance_id", "partitions", "member_id"]


def members_frame(group: GroupView | None) -> pd.DataFrame:
    """One row per member: who it is and which partitions it reads (sorted by client id)."""
    rows = [
        {
            "client_id": m.client_id,
            "group_instance_id": m.group_instance_id,
            "partitions": sorted(f"{t}-{p}" for t, p in m.partitions),
            "member_id": m.member_id,
        }
        for m in (group.members if group else ())
    ]
    frame = pd.DataFrame(rows, columns=MEMBER_COLUMNS)
    return frame.sort_values("client_id").reset_index(drop=True)


GROUP_STATE_COLUMNS = [
    "client_id",
    "member_protocol",
    "group_epoch",
    "member_epoch",
    "state",
    "assigned",
    "revoking",
    "waiting",
]


def group_state_frame(status: Mapping[str, Any], group: str) -> pd.DataFrame:
    """One row per member of ``group`` as its coordinator holds it now (``/state``): the
    protocol the member speaks, the group's epoch (a classic group's generation) beside
    the member's, its reconciliation state (consumer groups) and its partitions: held,
    being given up, waited for."""
    found: Mapping[str, Any] = next(
        (g for g in status.get("groups", []) if g["group"] == group), {"members": []}
    )
    rows = [
        {
            "client_id": m["client_id"],
            "member_protocol": m.get("member_protocol", found["protocol"]),
            "group_epoch": found["epoch"],
            "member_epoch": m["member_epoch"],
            "state": m["state"],
            "assigned": m["assigned"],
            "revoking": m["revoking"],
            "waiting": m["waiting"],
        }
        for m in found["members"]
    ]
    frame = pd.DataFrame(rows, columns=GROUP_STATE_COLUMNS)
    return frame.sort_values("client_id").reset_index(drop=True)
