"""Topics and their partitions: CreateTopics, DeleteTopics, CreatePartitions (in Kafka a
part of ``ReplicationControlManager``; a file of its own here to keep each short). Names
are checked as Kafka checks them, replicas placed round-robin over the live brokers (or
where asked), and a new partition's ISR is its live replicas.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from kafkalite.controller import reassignment
from kafkalite.controller.results import ApiResult, ControllerResult
from kafkalite.metadata.config_defs import InvalidConfigError, validate_topic_configs
from kafkalite.metadata.image import MetadataImage
from kafkalite.metadata.records import (
    ConfigRecord,
    MetadataRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicRecord,
)
from kafkalite.protocol.errors import ErrorCode, KafkaError

MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_TOPIC_NAME = re.compile(r"^[a-zA-Z0-9._-]+$")
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


@dataclass(frozen=True, slots=True)
class CreatableTopic:
    name: str
    num_partitions: int  # -1: broker default
    replication_factor: int  # -1: broker default
    configs: dict[str, str | None] = field(default_factory=dict)
    assignments: dict[int, tuple[int, ...]] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CreatedTopic:
    name: str
    result: ApiResult
    topic_id: str | None = None
    num_partitions: int = -1
    replication_factor: int = -1


def topic_name_error(name: str) -> str | None:
    """Kafka's rules for a legal topic name, as a message, or None when legal."""
    if not name:
        return "Topic name is empty"
    if name in (".", ".."):
        return f"Topic name cannot be {name!r}"
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        return f"Topic name is longer than {MAX_TOPIC_NAME_LENGTH} characters"
    if not _LEGAL_TOPIC_NAME.match(name):
        return (
            f"Topic name {name!r} contains characters other than "
            "ASCII letters, digits, '.', '_' and '-'"
        )
    return None


class TopicControlManager:
    def __init__(self, image: MetadataImage) -> None:
        self.image = image

    def create_topics(
        self, topics: Sequence[CreatableTopic], validate_only: bool = False
    ) -> ControllerResult[list[CreatedTopic]]:
        records: list[MetadataRecord] = []
        results: list[CreatedTopic] = []
        seen: set[str] = set()
        for topic in topics:
            created, topic_records = self._create_topic(topic, seen)
            results.append(created)
            seen.add(topic.name)
            if not validate_only:
                records.extend(topic_records)
        return ControllerResult(records, results)

    def _create_topic(
        self, topic: CreatableTopic, seen: set[str]
    ) -> tuple[CreatedTopic, list[MetadataRecord]]:
        def fail(error: ErrorCode, message: str) -> tuple[CreatedTopic, list[MetadataRecord]]:
            return CreatedTopic(topic.name, ApiResult(error, message)), []

        name_error = topic_name_error(topic.name)
        if name_error:
            return fail(ErrorCode.invalid_topic_exception, name_error)
        if topic.name in seen:
            return fail(ErrorCode.invalid_request, f"Topic {topic.name} is listed twice")
        if self.image.topic(topic.name) is not None:
            return fail(ErrorCode.topic_already_exists, f"Topic '{topic.name}' already exists.")
        try:
            validate_topic_configs(topic.configs)
        except InvalidConfigError as exc:
            return fail(ErrorCode.invalid_config, str(exc))
        if topic.assignments:
            assignment_or_error = self._check_assignments(topic.assignments)
        else:
            assignment_or_error = self._assign_replicas(topic)
        if isinstance(assignment_or_error, CreatedTopic):
            return CreatedTopic(topic.name, assignment_or_error.result), []
        assignment = assignment_or_error
        topic_id = str(uuid.uuid4())
        partitions = self._new_partitions(topic_id, assignment)
        if isinstance(partitions, ApiResult):
            return CreatedTopic(topic.name, partitions), []
        records: list[MetadataRecord] = [TopicRecord(topic.name, topic_id), *partitions]
        records.extend(
            ConfigRecord("topic", topic.name, key, value)
            for key, value in topic.configs.items()
            if value is not None
        )
        rf = len(next(iter(assignment.values())))
        return CreatedTopic(topic.name, ApiResult(), topic_id, len(assignment), rf), records

    def _assign_replicas(self, topic: CreatableTopic) -> dict[int, tuple[int, ...]] | CreatedTopic:
        partitions = topic.num_partitions
        if partitions == -1:
            partitions = self.image.broker_int("num.partitions")
        rf = topic.replication_factor
        if rf == -1:
            rf = self.image.broker_int("default.replication.factor")
        live = [b.broker_id for b in self.image.live_brokers()]
        if partitions <= 0:
            return _failed(
                topic.name,
                ErrorCode.invalid_partitions,
                "Number of partitions must be larger than 0.",
            )
        if rf <= 0:
            return _failed(
                topic.name,
                ErrorCode.invalid_replication_factor,
                "Replication factor must be larger than 0.",
            )
        if rf > len(live):
            return _failed(
                topic.name,
                ErrorCode.invalid_replication_factor,
                f"Replication factor: {rf} larger than available brokers: {len(live)}.",
            )
        return spread_replicas(live, partitions, rf, start=len(self.image.topics_by_id))

    def _check_assignments(
        self, assignments: dict[int, tuple[int, ...]]
    ) -> dict[int, tuple[int, ...]] | CreatedTopic:
        known = set(self.image.brokers)
        sizes = {len(r) for r in assignments.values()}
        if sorted(assignments) != list(range(len(assignments))) or len(sizes) != 1:
            return _failed(
                "",
                ErrorCode.invalid_replica_assignment,
                "Partitions must be 0..n-1 with the same number of replicas each",
            )
        for replicas in assignments.values():
            if len(set(replicas)) != len(replicas) or not set(replicas) <= known:
                return _failed(
                    "", ErrorCode.invalid_replica_assignment, f"Invalid replicas {list(replicas)}"
                )
        return assignments

    def delete_topics(self, names: Sequence[str]) -> ControllerResult[list[tuple[str, ApiResult]]]:
        records: list[MetadataRecord] = []
        results: list[tuple[str, ApiResult]] = []
        for name in names:
            topic = self.image.topic(name)
            if topic is None:
                results.append(
                    (
                        name,
                        ApiResult(
                            ErrorCode.unknown_topic_or_partition,
                            "This server does not host this topic.",
                        ),
                    )
                )
                continue
            records.append(RemoveTopicRecord(topic.topic_id))
            results.append((name, ApiResult()))
        return ControllerResult(records, results)

    def create_partitions(
        self,
        topic_name: str,
        count: int,
        validate_only: bool = False,
        assignments: Sequence[tuple[int, ...]] | None = None,
    ) -> ControllerResult[ApiResult]:
        """Grow a topic to ``count`` partitions; ``assignments`` (one replica list per new
        partition, leader first) places them, else they are spread over live brokers."""
        topic = self.image.topic(topic_name)
        if topic is None:
            return ControllerResult(
                [],
                ApiResult(
                    ErrorCode.unknown_topic_or_partition, f"Topic '{topic_name}' does not exist."
                ),
            )
        current = len(topic.partitions)
        if count <= current:
            return ControllerResult(
                [],
                ApiResult(
                    ErrorCode.invalid_partitions,
                    f"Topic currently has {current} partitions, {count} is not an increase.",
                ),
            )
        rf = len(topic.partitions[0].replicas)
        if assignments is not None:
            try:
                reassignment.validate_new_partitions(
                    assignments, count - current, rf, self.image.brokers
                )
            except KafkaError as exc:
                return ControllerResult([], ApiResult(exc.code, exc.message))
            spread = dict(zip(range(current, count), map(tuple, assignments), strict=True))
        else:
            live = [b.broker_id for b in self.image.live_brokers()]
            if rf > len(live):
                return ControllerResult(
                    [],
                    ApiResult(
                        ErrorCode.invalid_replication_factor,
                        f"Replication factor {rf} larger than available brokers {len(live)}.",
                    ),
                )
            spread = spread_replicas(live, count, rf, start=len(self.image.topics_by_id))
        new = self._new_partitions(topic.topic_id, {p: spread[p] for p in range(current, count)})
        if isinstance(new, ApiResult):
            return ControllerResult([], new)
        return ControllerResult([] if validate_only else list(new), ApiResult())

    def _new_partitions(
        self, topic_id: str, assignment: dict[int, tuple[int, ...]]
    ) -> list[PartitionRecord] | ApiResult:
        """A new partition's ISR is its live replicas and its leader the first of them (as
        in Kafka): a fenced replica joins the ISR by catching up once it is back, so being
        listed never counts as being in sync. No live replica at all is refused."""
        live = self.image.live_broker_ids()
        records = []
        for partition, replicas in sorted(assignment.items()):
            isr = tuple(r for r in replicas if r in live)
            if not isr:
                return ApiResult(
                    ErrorCode.invalid_replica_assignment,
                    f"All brokers specified in the manual partition assignment for partition "
                    f"{partition} are fenced or in controlled shutdown.",
                )
            records.append(PartitionRecord(topic_id, partition, replicas, isr, isr[0], 0, 0))
        return records


def _failed(name: str, error: ErrorCode, message: str) -> CreatedTopic:
    return CreatedTopic(name, ApiResult(error, message))


def spread_replicas(
    brokers: Sequence[int], partitions: int, replication_factor: int, start: int = 0
) -> dict[int, tuple[int, ...]]:
    """Round-robin replicas so leaders (first replica) and followers spread evenly.

    Partition ``p`` starts at broker ``(start + p) % n``; its followers are the next
    brokers in order, shifted per round so that two partitions with the same leader do
    not also share every follower (Kafka's rack-unaware assignment does the same).
    """
    n = len(brokers)
    assignment: dict[int, tuple[int, ...]] = {}
    for p in range(partitions):
        first = (start + p) % n
        shift = (p // n) % max(n - 1, 1)
        followers = [
            brokers[(first + 1 + (shift + j) % (n - 1)) % n] for j in range(replication_factor - 1)
        ]
        assignment[p] = (brokers[first], *followers)
    return assignment
