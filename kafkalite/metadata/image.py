"""The metadata image: the cluster as a broker knows it, rebuilt by replaying records.

Nothing changes the image but :meth:`MetadataImage.replay`. The controller replays the
records it writes into its own image too, so controller and brokers can never disagree
about what a committed record means. Owned by one asyncio task; not thread-safe.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from kafkalite.metadata.config_defs import BROKER_CONFIGS, TOPIC_CONFIGS
from kafkalite.metadata.records import (
    NO_LEADER,
    ConfigRecord,
    FenceBrokerRecord,
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    ProducerIdsRecord,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnfenceBrokerRecord,
)


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    broker_id: int
    host: str
    port: int
    rack: str | None
    incarnation_id: str
    broker_epoch: int
    fenced: bool = True


@dataclass(frozen=True, slots=True)
class PartitionRegistration:
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    leader: int
    leader_epoch: int
    partition_epoch: int
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()

    @property
    def is_reassigning(self) -> bool:
        return bool(self.adding_replicas or self.removing_replicas)

    @property
    def target_replicas(self) -> tuple[int, ...]:
        """Where a reassignment moves the partition (its replicas when none is under way)."""
        return tuple(r for r in self.replicas if r not in self.removing_replicas)

    def change(self, record: PartitionChangeRecord) -> PartitionRegistration:
        """Apply a change the way KRaft does: a new leader bumps the leader epoch."""
        result = self
        if record.leader is not None and record.leader != self.leader:
            result = replace(result, leader=record.leader, leader_epoch=self.leader_epoch + 1)
        if record.isr is not None:
            result = replace(result, isr=record.isr)
        if record.replicas is not None:
            result = replace(result, replicas=record.replicas)
        if record.adding_replicas is not None:
            result = replace(result, adding_replicas=record.adding_replicas)
        if record.removing_replicas is not None:
            result = replace(result, removing_replicas=record.removing_replicas)
        return replace(result, partition_epoch=self.partition_epoch + 1)


@dataclass(slots=True)
class TopicImage:
    name: str
    topic_id: str
    partitions: dict[int, PartitionRegistration] = field(default_factory=dict)


@dataclass(slots=True)
class MetadataImage:
    brokers: dict[int, BrokerRegistration] = field(default_factory=dict)
    topics_by_id: dict[str, TopicImage] = field(default_factory=dict)
    topic_ids: dict[str, str] = field(default_factory=dict)  # name -> id
    topic_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    broker_configs: dict[str, dict[str, str]] = field(default_factory=dict)  # "" = cluster
    group_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    next_producer_id: int = 0
    offset: int = -1  # offset of the last record replayed

    def replay(self, record: MetadataRecord, offset: int) -> None:
        match record:
            case RegisterBrokerRecord():
                self.brokers[record.broker_id] = BrokerRegistration(
                    record.broker_id,
                    record.host,
                    record.port,
                    record.rack,
                    record.incarnation_id,
                    record.broker_epoch,
                )
            case FenceBrokerRecord() | UnfenceBrokerRecord():
                current = self.brokers.get(record.broker_id)
                if current is not None and current.broker_epoch == record.broker_epoch:
                    fenced = isinstance(record, FenceBrokerRecord)
                    self.brokers[record.broker_id] = replace(current, fenced=fenced)
            case TopicRecord():
                self.topics_by_id[record.topic_id] = TopicImage(record.name, record.topic_id)
                self.topic_ids[record.name] = record.topic_id
            case PartitionRecord():
                self.topics_by_id[record.topic_id].partitions[record.partition] = (
                    PartitionRegistration(
                        record.replicas,
                        record.isr,
                        record.leader,
                        record.leader_epoch,
                        record.partition_epoch,
                        record.adding_replicas,
                        record.removing_replicas,
                    )
                )
            case PartitionChangeRecord():
                partitions = self.topics_by_id[record.topic_id].partitions
                partitions[record.partition] = partitions[record.partition].change(record)
            case RemoveTopicRecord():
                topic = self.topics_by_id.pop(record.topic_id)
                del self.topic_ids[topic.name]
                self.topic_configs.pop(topic.name, None)
            case ConfigRecord():
                self._replay_config(record)
            case ProducerIdsRecord():
                self.next_producer_id = max(self.next_producer_id, record.next_producer_id)
        self.offset = offset

    def reset(self) -> None:
        """Forget everything (a snapshot is about to be replayed)."""
        fresh = MetadataImage()
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(fresh, name))

    def reload(self, offset: int, records: list[MetadataRecord]) -> None:
        """Become what ``records`` (a snapshot's, or another image's ``to_records``)
        describe, as of ``offset``."""
        self.reset()
        for record in records:
            self.replay(record, offset)
        self.offset = offset

    def to_records(self) -> list[MetadataRecord]:
        """Records that rebuild this image when replayed into an empty one: a snapshot."""
        records: list[MetadataRecord] = []
        for b in sorted(self.brokers.values(), key=lambda b: b.broker_id):
            records.append(
                RegisterBrokerRecord(
                    b.broker_id, b.host, b.port, b.rack, b.incarnation_id, b.broker_epoch
                )
            )
            if not b.fenced:
                records.append(UnfenceBrokerRecord(b.broker_id, b.broker_epoch))
        for topic in self.topics_by_id.values():
            records.append(TopicRecord(topic.name, topic.topic_id))
            for index, p in sorted(topic.partitions.items()):
                records.append(
                    PartitionRecord(
                        topic.topic_id,
                        index,
                        p.replicas,
                        p.isr,
                        p.leader,
                        p.leader_epoch,
                        p.partition_epoch,
                        p.adding_replicas,
                        p.removing_replicas,
                    )
                )
        for resource_type, table in (
            ("topic", self.topic_configs),
            ("broker", self.broker_configs),
            ("group", self.group_configs),
        ):
            for resource, overrides in sorted(table.items()):
                records.extend(
                    ConfigRecord(resource_type, resource, k, v)
                    for k, v in sorted(overrides.items())
                )
        if self.next_producer_id:
            records.append(ProducerIdsRecord(-1, -1, self.next_producer_id))
        return records

    def _replay_config(self, record: ConfigRecord) -> None:
        table = self.config_table(record.resource_type)
        overrides = table.setdefault(record.resource_name, {})
        if record.value is None:
            overrides.pop(record.name, None)
            if not overrides:  # one representation of "no overrides", as a snapshot has
                del table[record.resource_name]
        else:
            overrides[record.name] = record.value

    # ---- queries -------------------------------------------------------------------

    def config_table(self, resource_type: str) -> dict[str, dict[str, str]]:
        """The overrides of one resource type ("topic", "broker" or "group") by name."""
        return {
            "topic": self.topic_configs,
            "broker": self.broker_configs,
            "group": self.group_configs,
        }[resource_type]

    def topic(self, name: str) -> TopicImage | None:
        topic_id = self.topic_ids.get(name)
        return None if topic_id is None else self.topics_by_id[topic_id]

    def partition(self, topic: str, partition: int) -> PartitionRegistration | None:
        image = self.topic(topic)
        return None if image is None else image.partitions.get(partition)

    def live_brokers(self) -> list[BrokerRegistration]:
        return sorted((b for b in self.brokers.values() if not b.fenced), key=lambda b: b.broker_id)

    def live_broker_ids(self) -> set[int]:
        """The unfenced brokers: those that may lead and join ISRs."""
        return {b.broker_id for b in self.brokers.values() if not b.fenced}

    def brokers_for_clients(self, serving: int) -> list[BrokerRegistration]:
        """The brokers Metadata and DescribeCluster list: the live ones and ``serving``,
        the broker answering. It serves, so a client may use it even while it is fenced;
        without it, a client of a cluster whose other brokers are all fenced would be
        told there are none and give up."""
        return sorted(
            (b for b in self.brokers.values() if not b.fenced or b.broker_id == serving),
            key=lambda b: b.broker_id,
        )

    def broker_config(self, name: str, broker_id: int | None = None) -> str:
        """Dynamic per-broker value, then cluster-wide dynamic value, then the default."""
        if broker_id is not None:
            value = self.broker_configs.get(str(broker_id), {}).get(name)
            if value is not None:
                return value
        value = self.broker_configs.get("", {}).get(name)
        return value if value is not None else BROKER_CONFIGS[name].default

    def broker_int(self, name: str) -> int:
        """A whole-number broker setting (``replica.lag.time.max.ms``, ...), typed."""
        return BROKER_CONFIGS[name].as_int(self.broker_config(name))

    def broker_bool(self, name: str) -> bool:
        """A true/false broker setting (``log.cleaner.enable``, ...), typed."""
        return BROKER_CONFIGS[name].as_bool(self.broker_config(name))

    def topic_int(self, topic: str, name: str) -> int:
        """A whole-number setting of ``topic`` (``min.insync.replicas``, ...), typed."""
        return TOPIC_CONFIGS[name].as_int(self.topic_config_source(topic, name)[0])

    def topic_bool(self, topic: str, name: str) -> bool:
        """A true/false setting of ``topic`` (``unclean.leader.election.enable``), typed."""
        return TOPIC_CONFIGS[name].as_bool(self.topic_config_source(topic, name)[0])

    def topic_config_source(self, topic: str, name: str) -> tuple[str, str]:
        """``(value, source)`` with source one of topic / broker / default."""
        override = self.topic_configs.get(topic, {}).get(name)
        if override is not None:
            return override, "topic"
        synonym = TOPIC_CONFIGS[name].broker_synonym
        if synonym is not None and synonym in BROKER_CONFIGS:
            cluster_wide = self.broker_configs.get("", {}).get(synonym)
            if cluster_wide is not None:
                return cluster_wide, "broker"
            return BROKER_CONFIGS[synonym].default, "default"
        return TOPIC_CONFIGS[name].default, "default"

    def topic_configs_resolved(self, topic: str) -> dict[str, str]:
        return {name: self.topic_config_source(topic, name)[0] for name in TOPIC_CONFIGS}

    def partition_leader(self, topic: str, partition: int) -> int:
        registration = self.partition(topic, partition)
        return NO_LEADER if registration is None else registration.leader
