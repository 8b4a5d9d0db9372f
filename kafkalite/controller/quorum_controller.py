"""The controller: the cluster's single writer of metadata.

Every operation validates a request against the controller's image and returns a
:class:`ControllerResult`: the records to append and the response to give once they are
committed. Nothing here mutates state directly; state changes only when committed records
are replayed (``MetadataImage.replay``), exactly like Kafka's ``QuorumController``. That
is what lets a new controller take over by replaying the same log.

Single-threaded: one asyncio task drives it; it does no I/O.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from kafkalite.controller import reassignment
from kafkalite.controller.partition_changes import (
    Change,
    elect_if_offline,
    preferred_leader,
    without_broker,
)
from kafkalite.metadata.config_defs import (
    InvalidConfigError,
    validate_broker_configs,
    validate_group_configs,
    validate_topic_configs,
)
from kafkalite.metadata.image import MetadataImage, PartitionRegistration
from kafkalite.metadata.records import (
    NO_LEADER,
    RECOVERING,
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
from kafkalite.protocol.errors import ErrorCode, KafkaError

T = TypeVar("T")

PRODUCER_ID_BLOCK_SIZE = 1000
PREFERRED_ELECTION = 0
UNCLEAN_ELECTION = 1
MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_TOPIC_NAME = re.compile(r"^[a-zA-Z0-9._-]+$")
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


@dataclass(frozen=True, slots=True)
class ControllerResult(Generic[T]):
    records: list[MetadataRecord]
    response: T


@dataclass(frozen=True, slots=True)
class ApiResult:
    """The outcome of one item of a batched admin request (one topic, one resource)."""

    error: ErrorCode = ErrorCode.none
    message: str | None = None


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


class QuorumController:
    """Validates operations and turns them into metadata records."""

    def __init__(self, image: MetadataImage) -> None:
        self.image = image

    # ---- brokers -------------------------------------------------------------------

    def register_broker(
        self,
        broker_id: int,
        host: str,
        port: int,
        rack: str | None,
        incarnation_id: str,
        next_offset: int,
    ) -> ControllerResult[int]:
        """A (re)starting broker registers; its epoch is the offset of its record.

        A broker that comes back (after a crash, say) may have lost records it had not yet
        flushed, so first it gives up whatever it led and leaves the ISRs, as if fenced; it
        then leads again only through an election (a new leader epoch) and rejoins ISRs by
        catching up, like any follower.
        """
        epoch = next_offset
        changes = _Changes(self.image)
        live = self._live() - {broker_id}
        if broker_id in self.image.brokers:
            changes.apply_all(
                lambda name, p: without_broker(p, broker_id, live, self._unclean(name))
            )
        changes.records.append(
            RegisterBrokerRecord(broker_id, host, port, rack, incarnation_id, epoch)
        )
        changes.records.append(UnfenceBrokerRecord(broker_id, epoch))
        live.add(broker_id)
        changes.apply_all(lambda name, p: elect_if_offline(p, live, self._unclean(name)))
        return ControllerResult(changes.records, epoch)

    def heartbeat(
        self,
        broker_id: int,
        broker_epoch: int,
        metadata_offset: int,
        want_fence: bool,
        want_shut_down: bool,
    ) -> ControllerResult[HeartbeatReply]:
        """A heartbeat keeps a broker's session; one asking to shut down first hands its
        leaderships and ISR places to the others (controlled shutdown)."""
        current = self.image.brokers.get(broker_id)
        if current is None or current.broker_epoch != broker_epoch:
            return ControllerResult([], HeartbeatReply(ErrorCode.stale_broker_epoch))
        caught_up = metadata_offset >= broker_epoch
        if want_shut_down or want_fence:
            records = [] if current.fenced else self.fence_broker(broker_id).records
            return ControllerResult(
                records, HeartbeatReply(ErrorCode.none, caught_up, True, want_shut_down)
            )
        if current.fenced and caught_up:
            changes = _Changes(self.image)
            changes.records.append(UnfenceBrokerRecord(broker_id, broker_epoch))
            live = self._live() | {broker_id}
            changes.apply_all(lambda name, p: elect_if_offline(p, live, self._unclean(name)))
            return ControllerResult(changes.records, HeartbeatReply(ErrorCode.none, True, False))
        return ControllerResult([], HeartbeatReply(ErrorCode.none, caught_up, current.fenced))

    def fence_broker(self, broker_id: int) -> ControllerResult[None]:
        """No heartbeat for ``broker.session.timeout.ms`` (or a controlled shutdown): the
        broker leaves every ISR it can and its partitions get new leaders."""
        current = self.image.brokers[broker_id]
        changes = _Changes(self.image)
        live = self._live() - {broker_id}
        changes.apply_all(lambda name, p: without_broker(p, broker_id, live, self._unclean(name)))
        changes.records.insert(0, FenceBrokerRecord(broker_id, current.broker_epoch))
        return ControllerResult(changes.records, None)

    def _live(self) -> set[int]:
        return {b.broker_id for b in self.image.live_brokers()}

    def _unclean(self, topic: str) -> bool:
        return self.image.topic_bool(topic, "unclean.leader.election.enable")

    # ---- partitions ----------------------------------------------------------------

    def alter_partition(
        self,
        broker_id: int,
        broker_epoch: int,
        topic: str,
        partition: int,
        leader_epoch: int,
        partition_epoch: int,
        new_isr: tuple[int, ...],
    ) -> ControllerResult[AlterPartitionReply]:
        """A leader shrinks or expands its ISR. Stale requests (an older leader epoch or
        partition epoch) are rejected, so an ISR change can never undo a newer one."""
        current = self.image.brokers.get(broker_id)
        registration = self.image.partition(topic, partition)
        if current is None or current.broker_epoch != broker_epoch:
            return ControllerResult([], AlterPartitionReply(ErrorCode.stale_broker_epoch))
        if registration is None:
            return ControllerResult([], AlterPartitionReply(ErrorCode.unknown_topic_or_partition))
        if registration.leader != broker_id:
            return ControllerResult([], AlterPartitionReply(ErrorCode.not_leader_or_follower))
        if leader_epoch != registration.leader_epoch:
            return ControllerResult([], AlterPartitionReply(ErrorCode.fenced_leader_epoch))
        if partition_epoch != registration.partition_epoch:
            return ControllerResult([], AlterPartitionReply(ErrorCode.invalid_update_version))
        live = self._live()
        added = set(new_isr) - set(registration.isr)
        if (
            broker_id not in new_isr
            or not set(new_isr) <= set(registration.replicas)
            or not added <= live
        ):
            return ControllerResult([], AlterPartitionReply(ErrorCode.ineligible_replica))
        ordered = tuple(r for r in registration.replicas if r in new_isr)
        if ordered == registration.isr:
            return ControllerResult([], AlterPartitionReply(ErrorCode.none, registration))
        topic_id = self.image.topic_ids[topic]
        change = PartitionChangeRecord(topic_id, partition, isr=ordered)
        # the replica a reassignment waits for is now in sync: the move completes with it
        change = (
            reassignment.maybe_complete(topic_id, partition, registration.change(change), live)
            or change
        )
        return ControllerResult(
            [change], AlterPartitionReply(ErrorCode.none, registration.change(change))
        )

    def alter_partition_reassignments(
        self, wanted: Sequence[tuple[str, int, Sequence[int] | None]]
    ) -> ControllerResult[list[tuple[str, int, ApiResult]]]:
        """Start (a replica list) or cancel (None) moving each partition; see
        ``reassignment`` for how a move proceeds."""
        records: list[MetadataRecord] = []
        results: list[tuple[str, int, ApiResult]] = []
        for topic, index, target in wanted:
            try:
                record = reassignment.change_for(self.image, self._live(), topic, index, target)
            except KafkaError as exc:
                results.append((topic, index, ApiResult(exc.code, exc.message)))
                continue
            records.append(record)
            results.append((topic, index, ApiResult()))
        return ControllerResult(records, results)

    def elect_leaders(
        self, election_type: int, partitions: Sequence[tuple[str, int]] | None
    ) -> ControllerResult[list[tuple[str, int, ApiResult]]]:
        """ElectLeaders. Preferred (0): move leadership to each partition's first replica
        (also the automatic leader rebalance). Unclean (1): give a leaderless partition any
        live replica as leader, accepting the loss of what only the old ISR had.
        ``None`` means every partition."""
        live = self._live()
        results: list[tuple[str, int, ApiResult]] = []
        records: list[MetadataRecord] = []
        wanted = partitions
        if wanted is None:
            wanted = [
                (t.name, p) for t in self.image.topics_by_id.values() for p in sorted(t.partitions)
            ]
        for topic, index in wanted:
            registration = self.image.partition(topic, index)
            if registration is None:
                results.append((topic, index, ApiResult(ErrorCode.unknown_topic_or_partition)))
                continue
            if election_type == UNCLEAN_ELECTION:
                change = elect_if_offline(registration, live, unclean=True)
                not_done = (
                    ErrorCode.election_not_needed
                    if registration.leader != NO_LEADER
                    else ErrorCode.eligible_leaders_not_available
                )
            else:
                change = preferred_leader(registration, live)
                not_done = (
                    ErrorCode.election_not_needed
                    if registration.leader == registration.replicas[0]
                    else ErrorCode.preferred_leader_not_available
                )
            if change.is_empty:
                results.append((topic, index, ApiResult(not_done)))
                continue
            records.append(
                PartitionChangeRecord(
                    self.image.topic_ids[topic],
                    index,
                    leader=change.leader,
                    isr=change.isr,
                    leader_recovery_state=RECOVERING if change.unclean else None,
                )
            )
            results.append((topic, index, ApiResult()))
        return ControllerResult(records, results)

    def allocate_producer_ids(self, broker_id: int, broker_epoch: int) -> ControllerResult[int]:
        """Hand out the next block, so producer ids stay unique across brokers and restarts."""
        start = self.image.next_producer_id
        record = ProducerIdsRecord(broker_id, broker_epoch, start + PRODUCER_ID_BLOCK_SIZE)
        return ControllerResult([record], start)

    # ---- topics --------------------------------------------------------------------

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
        live = self._live()
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

    # ---- configs -------------------------------------------------------------------

    def alter_configs(
        self,
        resource_type: str,
        resource_name: str,
        changes: dict[str, str | None],
        replace_all: bool,
        validate_only: bool = False,
    ) -> ControllerResult[ApiResult]:
        """Set (or, with ``None``, delete) overrides; ``replace_all`` is legacy AlterConfigs."""
        if resource_type == "topic" and self.image.topic(resource_name) is None:
            return ControllerResult(
                [],
                ApiResult(
                    ErrorCode.unknown_topic_or_partition, f"Topic {resource_name} does not exist"
                ),
            )
        if (
            resource_type == "broker"
            and resource_name
            and not (resource_name.isdigit() and int(resource_name) in self.image.brokers)
        ):
            return ControllerResult(
                [], ApiResult(ErrorCode.invalid_request, f"Unknown broker {resource_name!r}")
            )
        present = {k: v for k, v in changes.items() if v is not None}
        validate = {
            "topic": validate_topic_configs,
            "broker": validate_broker_configs,
            "group": validate_group_configs,
        }[resource_type]
        try:
            validate(present)
        except InvalidConfigError as exc:
            return ControllerResult([], ApiResult(ErrorCode.invalid_config, str(exc)))
        table = self.image.config_table(resource_type)
        current = table.get(resource_name, {})
        effective = dict(changes)
        if replace_all:
            effective.update({k: None for k in current if k not in changes})
        records: list[MetadataRecord] = [
            ConfigRecord(resource_type, resource_name, key, value)
            for key, value in effective.items()
            if not (value is None and key not in current)
        ]
        if resource_type == "topic" and effective.get("unclean.leader.election.enable") == "true":
            records.extend(self._unclean_elections(resource_name))
        return ControllerResult([] if validate_only else records, ApiResult())

    def _unclean_elections(self, topic: str) -> list[MetadataRecord]:
        """Turning ``unclean.leader.election.enable`` on takes effect at once: an offline
        partition gets any live replica as leader (Kafka does the same)."""
        changes = _Changes(self.image)
        live = self._live()
        changes.apply_all(
            lambda name, p: elect_if_offline(p, live, unclean=True) if name == topic else Change()
        )
        return changes.records


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


@dataclass(frozen=True, slots=True)
class HeartbeatReply:
    error: ErrorCode
    is_caught_up: bool = False
    is_fenced: bool = True
    should_shut_down: bool = False


@dataclass(frozen=True, slots=True)
class AlterPartitionReply:
    error: ErrorCode
    registration: PartitionRegistration | None = None


class _Changes:
    """Partition changes computed one after another, each seeing the ones before it (the
    records are not replayed until committed, so the image alone would not show them)."""

    def __init__(self, image: MetadataImage) -> None:
        self.image = image
        self.records: list[MetadataRecord] = []
        self._scratch: dict[tuple[str, int], PartitionRegistration] = {}

    def apply_all(self, rule: Callable[[str, PartitionRegistration], Change]) -> None:
        for topic in self.image.topics_by_id.values():
            for index, original in sorted(topic.partitions.items()):
                key = (topic.topic_id, index)
                registration = self._scratch.get(key, original)
                change = rule(topic.name, registration)
                if change.is_empty:
                    continue
                record = PartitionChangeRecord(
                    topic.topic_id,
                    index,
                    change.leader,
                    change.isr,
                    RECOVERING if change.unclean else None,
                )
                self.records.append(record)
                self._scratch[key] = registration.change(record)
