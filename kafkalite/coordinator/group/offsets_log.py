"""What the group coordinator stores in ``__consumer_offsets``, and how.

Kafka stores binary keys and values there; Kafka-Lite stores JSON so a student can read the
topic with any consumer and see exactly what a commit wrote. The topic is compacted, so
the latest value per key is what counts::

    offset commit   key   {"type": "offset", "group": G, "topic": T, "partition": P}
                    value {"offset": O, "leader_epoch": E, "metadata": M,
                           "commit_timestamp": ms}          (null value: deleted)
    group metadata  key   {"type": "group", "group": G}
                    value {"protocol_type": ..., "generation": N, "protocol": ...,
                           "leader": member id, "members": [
                             {"member_id": ..., "group_instance_id": ... or null,
                              "client_id": ..., "client_host": ...,
                              "rebalance_timeout": ms, "session_timeout": ms,
                              "subscription": base64, "assignment": base64}]}
                                                            (null value: group deleted)
    consumer group  (KIP-848) the records of ``consumer_group_records``

The group's partition is ``abs(java_hash(group_id)) % partitions``, as in Kafka, so the
same group always lands on the same coordinator.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any, Protocol

from kafkalite.coordinator.group.group import Group, GroupState, Member
from kafkalite.coordinator.partition_loads import LogChunk
from kafkalite.protocol.records import Record

OFFSETS_TOPIC = "__consumer_offsets"


class OffsetsTopic(Protocol):
    """What the coordinator needs from the broker (it must never import the broker)."""

    def partition_count(self) -> int: ...

    def leader_epoch(self, partition: int) -> int | None:
        """This broker's leader epoch of the partition; None unless it leads it."""

    async def append(
        self,
        partition: int,
        records: list[Record],
        producer_id: int = -1,
        producer_epoch: int = -1,
    ) -> int:
        """Append one batch (transactional with a producer id) and wait until committed;
        its first offset. Raises KafkaError on failure."""

    def read_chunk(self, partition: int, start: int, max_bytes: int) -> LogChunk:
        """Whole batches from ``start`` (at least one, up to ``max_bytes``) below the log
        end: one step of a load. Raises KafkaError."""


@dataclass(frozen=True, slots=True)
class CommittedOffset:
    offset: int
    leader_epoch: int
    metadata: str | None
    commit_timestamp: int


def _key(data: dict[str, Any]) -> bytes:
    return json.dumps(data, sort_keys=True).encode()


def offset_record(group: str, topic: str, partition: int, committed: CommittedOffset) -> Record:
    return Record(
        key=_key({"type": "offset", "group": group, "topic": topic, "partition": partition}),
        value=json.dumps(
            {
                "offset": committed.offset,
                "leader_epoch": committed.leader_epoch,
                "metadata": committed.metadata,
                "commit_timestamp": committed.commit_timestamp,
            }
        ).encode(),
        timestamp=committed.commit_timestamp,
    )


def offset_tombstone(group: str, topic: str, partition: int, now_ms: int) -> Record:
    """The committed offset is deleted (OffsetDelete, DeleteGroups)."""
    return Record(
        key=_key({"type": "offset", "group": group, "topic": topic, "partition": partition}),
        value=None,
        timestamp=now_ms,
    )


def group_value(group: Group) -> dict[str, Any]:
    """What is kept of a classic group (its ``group`` record's value): Kafka's
    ``GroupMetadataValue``, each member with its metadata for the selected protocol and
    its assignment, so that another coordinator can carry on with the same members."""
    protocol = group.protocol_name
    return {
        "protocol_type": group.protocol_type,
        "generation": group.generation_id,
        "protocol": protocol,
        "leader": group.leader_id,
        "members": [
            {
                "member_id": m.member_id,
                "group_instance_id": m.group_instance_id,
                "client_id": m.client_id,
                "client_host": m.client_host,
                "rebalance_timeout": m.rebalance_timeout_ms,
                "session_timeout": m.session_timeout_ms,
                "subscription": _b64(m.metadata_for(protocol) if protocol else b""),
                "assignment": _b64(m.assignment),
            }
            for m in group.members.values()
        ],
    }


def restore_group(group_id: str, value: dict[str, Any], now_ms: int) -> Group:
    """The classic group a ``group`` record keeps (Kafka's ``replay`` of a
    ``GroupMetadataValue``): Stable with its members, or Empty without. Each member's
    session starts over now, as the coordinator loads it (Kafka's ``onLoaded``), so that
    members reach their new coordinator without a rebalance, and a static member that
    restarts meanwhile takes its place as it would have with the old one."""
    protocol = value.get("protocol")
    kept = [m for m in value.get("members", []) if isinstance(m, dict)]  # older: ids only
    group = Group(
        group_id,
        GroupState.STABLE if kept else GroupState.EMPTY,
        int(value["generation"]),
        value.get("protocol_type"),
        protocol if kept else None,
    )
    for m in kept:
        member = Member(
            str(m["member_id"]),
            str(m["client_id"]),
            str(m["client_host"]),
            int(m["session_timeout"]),
            int(m["rebalance_timeout"]),
            [(str(protocol), base64.b64decode(m["subscription"]))],
            m.get("group_instance_id"),
            base64.b64decode(m["assignment"]),
            last_heartbeat_ms=now_ms,
        )
        group.add_member(member, group.protocol_type or "")
    if value.get("leader") in group.members:
        group.leader_id = value["leader"]
    return group


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def group_record(group: str, value: dict[str, Any] | None, now_ms: int) -> Record:
    return encode({"type": "group", "group": group}, value, now_ms)


def encode(key: dict[str, Any], value: dict[str, Any] | None, now_ms: int) -> Record:
    """A record of any type (a consumer group's, ``consumer_group_records``)."""
    return Record(
        key=_key(key),
        value=None if value is None else json.dumps(value).encode(),
        timestamp=now_ms,
    )


def decode(record: Record) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
    """``(key, value)``; None for a record this coordinator did not write."""
    if record.key is None:
        return None
    try:
        key = json.loads(record.key)
        value = None if record.value is None else json.loads(record.value)
    except ValueError:
        return None
    return (key, value) if isinstance(key, dict) else None
