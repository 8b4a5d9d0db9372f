"""Metadata records: every change to the cluster's shape is one of these, appended to the
``__cluster_metadata`` log and replayed, in order, by every broker.

They mirror KRaft's record types (``RegisterBrokerRecord``, ``TopicRecord``,
``PartitionRecord``, ``PartitionChangeRecord``, ``ConfigRecord``, ...) with Kafka's field
names, but are stored as JSON values inside ordinary v2 record batches so that a student
can read the metadata log with any Kafka tool's eyes and a text editor.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from typing import Any

NO_LEADER = -1
RECOVERING = 1  # LeaderRecoveryState after an unclean election


@dataclass(frozen=True, slots=True)
class RegisterBrokerRecord:
    broker_id: int
    host: str
    port: int
    rack: str | None
    incarnation_id: str
    broker_epoch: int


@dataclass(frozen=True, slots=True)
class FenceBrokerRecord:
    broker_id: int
    broker_epoch: int


@dataclass(frozen=True, slots=True)
class UnfenceBrokerRecord:
    broker_id: int
    broker_epoch: int


@dataclass(frozen=True, slots=True)
class TopicRecord:
    name: str
    topic_id: str


@dataclass(frozen=True, slots=True)
class PartitionRecord:
    topic_id: str
    partition: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_epoch: int
    partition_epoch: int
    adding_replicas: tuple[int, ...] = ()  # a reassignment under way (KIP-455)
    removing_replicas: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class PartitionChangeRecord:
    """A new leader and/or ISR. ``None`` means unchanged; a new leader bumps leader_epoch.

    ``leader_recovery_state`` is Kafka's: ``RECOVERING`` (1) marks a leader chosen by an
    unclean election, which may lack records the old ISR had acknowledged. ``replicas``,
    ``adding_replicas`` and ``removing_replicas`` move a partition (a reassignment): while
    it is under way the replicas are the target ones followed by those being removed."""

    topic_id: str
    partition: int
    leader: int | None = None
    isr: tuple[int, ...] | None = None
    leader_recovery_state: int | None = None
    replicas: tuple[int, ...] | None = None
    adding_replicas: tuple[int, ...] | None = None
    removing_replicas: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class RemoveTopicRecord:
    topic_id: str


@dataclass(frozen=True, slots=True)
class ConfigRecord:
    """``value=None`` removes the override, so the default applies again."""

    resource_type: str  # "topic", "broker" or "group"
    resource_name: str  # topic or group name, or broker id ("" for the cluster default)
    name: str
    value: str | None


@dataclass(frozen=True, slots=True)
class ProducerIdsRecord:
    """A block of producer ids handed to one broker; ``next_producer_id`` is past its end."""

    broker_id: int
    broker_epoch: int
    next_producer_id: int


MetadataRecord = (
    RegisterBrokerRecord
    | FenceBrokerRecord
    | UnfenceBrokerRecord
    | TopicRecord
    | PartitionRecord
    | PartitionChangeRecord
    | RemoveTopicRecord
    | ConfigRecord
    | ProducerIdsRecord
)

_BY_NAME: dict[str, type[Any]] = {
    cls.__name__: cls
    for cls in (
        RegisterBrokerRecord,
        FenceBrokerRecord,
        UnfenceBrokerRecord,
        TopicRecord,
        PartitionRecord,
        PartitionChangeRecord,
        RemoveTopicRecord,
        ConfigRecord,
        ProducerIdsRecord,
    )
}


def _from_dict(raw: dict[str, Any]) -> MetadataRecord:
    cls = _BY_NAME[raw.pop("type")]
    for f in fields(cls):
        if isinstance(raw.get(f.name), list):
            raw[f.name] = tuple(raw[f.name])
    record: MetadataRecord = cls(**raw)
    return record


def encode_batch(records: list[MetadataRecord]) -> bytes:
    """One quorum entry: the records of one controller operation, applied atomically."""
    return json.dumps([{"type": type(r).__name__, **asdict(r)} for r in records]).encode()


def decode_batch(data: bytes) -> list[MetadataRecord]:
    return [_from_dict(raw) for raw in json.loads(data)]
