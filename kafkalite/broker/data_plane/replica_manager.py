"""The partitions this broker hosts, and the produce/fetch work that spans them.

Kafka's ``ReplicaManager``: it turns committed metadata (a partition was created, a leader
changed, a topic was deleted) into local state (a log directory, a leader or follower
role), appends produced batches to leaders, serves reads, and parks requests that must
wait (acks=all, fetch ``min_bytes``) in the purgatory.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from kafkalite.broker.data_plane.purgatory import Purgatory
from kafkalite.broker.events import EventLog
from kafkalite.events import EventType
from kafkalite.metadata.image import MetadataImage, PartitionRegistration
from kafkalite.protocol.errors import ErrorCode, KafkaError
from kafkalite.replication.partition import FOLLOWER_READ, READ_COMMITTED, Partition
from kafkalite.storage.config import LogConfig
from kafkalite.storage.errors import StorageError
from kafkalite.storage.file_records import Records
from kafkalite.storage.log import AppendInfo
from kafkalite.storage.log_manager import LogManager
from kafkalite.storage.producer_state import AppendOrigin
from kafkalite.storage.txn_index import AbortedTxn
from kafkalite.topic_partition import TopicPartition

log = logging.getLogger(__name__)


@dataclass(slots=True)
class ProduceResult:
    error: ErrorCode = ErrorCode.none
    base_offset: int = -1
    log_append_time_ms: int = -1
    log_start_offset: int = -1
    message: str | None = None
    last_offset: int = -1
    leader_epoch: int = -1
    """The leader epoch the batch was appended in: acks=all is answered for that epoch."""


@dataclass(slots=True)
class FetchRequestPartition:
    """One partition of a Fetch, as the handler read it (not frozen: one is made per
    partition per Fetch, and nothing changes it)."""

    topic: str
    partition: int
    fetch_offset: int
    max_bytes: int
    current_leader_epoch: int = -1
    replica_id: int = -1  # a follower broker's id; -1 for consumers
    log_start_offset: int = -1  # a follower's own log start offset


@dataclass(slots=True)
class FetchResult:
    error: ErrorCode = ErrorCode.none
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    records: Records = b""
    """Named in the segment file, not read: the response sends them from there."""
    aborted_transactions: list[AbortedTxn] = field(default_factory=list)


class ReplicaManager:
    """Owned by the broker's event loop; never touched from another thread."""

    def __init__(
        self,
        broker_id: int,
        logs: LogManager,
        image: MetadataImage,
        events: EventLog,
        now_ms: Callable[[], int],
    ) -> None:
        self.broker_id = broker_id
        self.logs = logs
        self.image = image
        self.events = events
        self.now_ms = now_ms
        self.partitions: dict[TopicPartition, Partition] = {}
        self.produce_waiters = Purgatory()
        self.fetch_waiters = Purgatory()
        self.delete_records_waiters = Purgatory()

    # ---- metadata -> local state -----------------------------------------------------

    def log_config(self, topic: str) -> LogConfig:
        return LogConfig.from_configs(self.image.topic_configs_resolved(topic))

    def apply_partition(
        self, topic: str, index: int, reg: PartitionRegistration, topic_id: str | None = None
    ) -> None:
        """Make local state match one partition's committed registration (``topic_id``:
        of the topic it belongs to, so a log of an older same-named topic is not reused)."""
        if self.broker_id not in reg.replicas:
            if self.remove_partition(topic, index):  # moved away by a reassignment
                self.events.emit(EventType.REPLICA_DELETED, topic=topic, partition=index)
            return
        key = (topic, index)
        partition = self.partitions.get(key)
        if partition is None:
            plog = self.logs.get_or_create(topic, index, self.log_config(topic), topic_id)
            partition = Partition(topic, index, plog, self.broker_id)
            self.partitions[key] = partition
        if reg.leader == self.broker_id:
            was_leader = partition.is_leader and partition.leader_epoch == reg.leader_epoch
            partition.make_leader(
                reg.leader_epoch, reg.partition_epoch, reg.replicas, reg.isr, self.now_ms()
            )
            if not was_leader:
                self.events.emit(
                    EventType.LEADER_ELECTED,
                    topic=topic,
                    partition=index,
                    leader=self.broker_id,
                    leader_epoch=reg.leader_epoch,
                )
        else:
            partition.make_follower(
                reg.leader, reg.leader_epoch, reg.partition_epoch, reg.replicas, reg.isr
            )
        self.fetch_waiters.notify(key)
        self.produce_waiters.notify(key)  # a smaller ISR may have moved the HW

    def reconcile(self) -> None:
        """Match every partition to the image at once: after a metadata snapshot, and when
        a starting broker has replayed the metadata log. Logs on disk that the image does
        not place on this broker (topics deleted, replicas moved while it was down) go."""
        wanted = {
            (t.name, i): (t.topic_id, reg)
            for t in self.image.topics_by_id.values()
            for i, reg in t.partitions.items()
        }
        for key in [k for k in self.partitions if k not in wanted]:
            self.remove_partition(*key)
        hosted = {key for key, (_, reg) in wanted.items() if self.broker_id in reg.replicas}
        for key in [k for k in self.logs.logs if k not in hosted and k not in self.partitions]:
            self.logs.delete(*key)
        for (topic, index), (topic_id, reg) in sorted(wanted.items()):
            self.apply_partition(topic, index, reg, topic_id)

    def remove_partition(self, topic: str, index: int) -> bool:
        """Drop the local replica and delete its log; False if there was none."""
        if self.partitions.pop((topic, index), None) is None:
            return False
        self.logs.delete(topic, index)
        return True

    def remove_topic(self, topic: str) -> None:
        for key in [k for k in self.partitions if k[0] == topic]:
            self.remove_partition(*key)

    def update_topic_config(self, topic: str) -> None:
        config = self.log_config(topic)
        for (name, _), partition in self.partitions.items():
            if name == topic:
                partition.log.update_config(config)

    def update_all_configs(self) -> None:
        for topic in {name for name, _ in self.partitions}:
            self.update_topic_config(topic)

    # ---- produce ---------------------------------------------------------------------

    def get_partition(self, topic: str, index: int) -> Partition:
        """This broker's replica; a partition that exists elsewhere is NOT_LEADER_OR_FOLLOWER
        (as in Kafka: the client refreshes its metadata and finds where it moved)."""
        partition = self.partitions.get((topic, index))
        if partition is None:
            exists = self.image.partition(topic, index) is not None
            raise KafkaError(
                ErrorCode.not_leader_or_follower
                if exists
                else ErrorCode.unknown_topic_or_partition,
                f"This server does not host {topic}-{index}",
            )
        return partition

    def append_to_leader(
        self,
        topic: str,
        index: int,
        records: bytes | memoryview | None,
        required_acks: int,
        origin: AppendOrigin = AppendOrigin.CLIENT,
    ) -> ProduceResult:
        """Append one partition's batches; errors become the partition's error code."""
        try:
            partition = self.get_partition(topic, index)
            if not records:
                raise KafkaError(ErrorCode.corrupt_message, "produce request without records")
            min_isr = self.image.topic_int(topic, "min.insync.replicas")
            info = partition.append_records_to_leader(records, required_acks, min_isr, origin)
        except KafkaError as exc:
            return ProduceResult(exc.code, message=exc.message)
        except StorageError as exc:
            return ProduceResult(exc.error_code, message=str(exc))
        self._after_append(topic, index, info)
        return ProduceResult(
            base_offset=info.first_offset,
            last_offset=info.last_offset,
            log_append_time_ms=info.log_append_time_ms,
            log_start_offset=info.log_start_offset,
            leader_epoch=partition.leader_epoch,
        )

    def _after_append(self, topic: str, index: int, info: AppendInfo) -> None:
        if info.duplicate_of is not None:
            self.events.emit(
                EventType.DUPLICATE_SUPPRESSED,
                topic=topic,
                partition=index,
                original_offset=info.first_offset,
            )
            return
        self.fetch_waiters.notify((topic, index))
        self.produce_waiters.notify((topic, index))

    async def wait_for_acks(
        self, pending: Sequence[tuple[str, int, ProduceResult]], timeout_s: float
    ) -> None:
        """acks=all: wait until each batch's answer is settled, then fix up each result.

        Each partition is judged on its own, at every check, and its answer is final once
        settled (Kafka's ``DelayedProduce`` keeps a status per partition): one still
        waiting neither delays the judgement of the others nor has them judged again
        later, when the ISR may have shrunk after their HW had passed."""
        waiting = [(t, p, r) for t, p, r in pending if r.error == ErrorCode.none]

        def settled() -> bool:
            waiting[:] = [(t, p, r) for t, p, r in waiting if not self._acked(t, p, r)]
            return not waiting

        keys = [(t, p) for t, p, _ in waiting]
        if not await self.produce_waiters.wait_until(keys, settled, timeout_s):
            for _, _, result in waiting:
                result.error = ErrorCode.request_timed_out

    def _acked(self, topic: str, index: int, result: ProduceResult) -> bool:
        """Is this batch's answer settled (True), with its error set if any?

        Only the leader of the epoch the batch was appended in can answer for it. Once
        leadership moved, even back to this broker, the log below the HW is the new
        epoch's: the batch may have been truncated and its offsets reused by others, so
        NOT_LEADER_OR_FOLLOWER, never OK (Kafka answers so as a broker becomes follower;
        comparing epochs also catches a leadership lost and regained between two checks).
        Replicated to the whole ISR, but the ISR shrank below ``min.insync.replicas``
        meanwhile: the write is in the log but not as safe as asked,
        NOT_ENOUGH_REPLICAS_AFTER_APPEND (the client retries; idempotence dedupes)."""
        partition = self.partitions.get((topic, index))
        if (
            partition is None
            or not partition.is_leader
            or partition.leader_epoch != result.leader_epoch
        ):
            result.error = ErrorCode.not_leader_or_follower
            return True
        if partition.high_watermark <= result.last_offset:
            return False
        min_isr = self.image.topic_int(topic, "min.insync.replicas")
        if len(partition.isr) < min_isr:
            result.error = ErrorCode.not_enough_replicas_after_append
        return True

    # ---- fetch -----------------------------------------------------------------------

    def read(
        self,
        request: FetchRequestPartition,
        isolation_level: int,
        max_bytes: int,
        min_one_message: bool,
    ) -> FetchResult:
        try:
            partition = self.get_partition(request.topic, request.partition)
            partition.check_leader(request.current_leader_epoch)
            if request.replica_id >= 0:
                partition.check_follower(request.replica_id)
                isolation_level = FOLLOWER_READ
            data = partition.read_records(
                request.fetch_offset,
                min(max_bytes, request.max_bytes),
                isolation_level,
                min_one_message,
            )
            if request.replica_id >= 0:
                partition.follower_answered(request.replica_id)
        except KafkaError as exc:
            if exc.code == ErrorCode.fenced_leader_epoch:
                self.events.emit(
                    EventType.REQUEST_FENCED,
                    api="Fetch",
                    topic=request.topic,
                    partition=request.partition,
                    replica_id=request.replica_id,
                    leader_epoch=request.current_leader_epoch,
                )
            return FetchResult(exc.code)
        except StorageError as exc:
            return FetchResult(exc.error_code, *self._offsets(request))
        return FetchResult(
            ErrorCode.none,
            partition.high_watermark,
            partition.last_stable_offset,
            partition.log_start_offset,
            data.records,
            partition.aborted_transactions(request.fetch_offset, data.next_offset)
            if isolation_level == READ_COMMITTED
            else [],
        )

    def record_follower_fetches(
        self, requests: Sequence[FetchRequestPartition], max_wait_ms: int
    ) -> int:
        """A follower's Fetch says how far it has got: take that into account at once,
        before the Fetch waits for new data (up to ``max_wait_ms``, the follower's
        ``replica.fetch.wait.max.ms``), because it may move the high watermark that
        acks=all producers and consumers wait for. Returns when the wait ends at the
        latest: what identifies this Fetch's hold to :meth:`abandon_follower_fetches`."""
        now_ms = self.now_ms()
        for request in requests:
            partition = self.partitions.get((request.topic, request.partition))
            if request.replica_id < 0 or partition is None:
                continue
            try:
                partition.check_leader(request.current_leader_epoch)
                moved = partition.update_follower_fetch(
                    request.replica_id,
                    request.fetch_offset,
                    now_ms,
                    request.log_start_offset,
                    max_wait_ms,
                )
            except KafkaError:
                continue  # read() reports the error in the response
            if moved:  # acks=all producers and consumers' long polls wait for the HW
                self.produce_waiters.notify((request.topic, request.partition))
                self.fetch_waiters.notify((request.topic, request.partition))
            self.delete_records_waiters.notify((request.topic, request.partition))
        return now_ms + max_wait_ms

    def abandon_follower_fetches(
        self, requests: Sequence[FetchRequestPartition], held_until_ms: int
    ) -> None:
        """A follower's held Fetch ended unanswered (its connection closed: the follower
        dropped it for a new partition, or died): it waits there no more, and must not be
        credited as caught up for the rest of its ``max_wait``."""
        for request in requests:
            partition = self.partitions.get((request.topic, request.partition))
            if request.replica_id >= 0 and partition is not None:
                partition.follower_fetch_abandoned(request.replica_id, held_until_ms)

    def _offsets(self, request: FetchRequestPartition) -> tuple[int, int, int]:
        partition = self.partitions.get((request.topic, request.partition))
        if partition is None:
            return -1, -1, -1
        return partition.high_watermark, partition.last_stable_offset, partition.log_start_offset

    def read_all(
        self,
        requests: Sequence[FetchRequestPartition],
        isolation_level: int,
        response_max_bytes: int,
    ) -> list[FetchResult]:
        """Read each partition in order, sharing the response's byte budget.

        The first partition that has data returns at least one whole batch even past the
        limits (Kafka's rule, so one large batch cannot block a consumer forever).
        """
        results: list[FetchResult] = []
        budget = response_max_bytes
        for request in requests:
            result = self.read(
                request,
                isolation_level,
                max(budget, 0),
                min_one_message=budget == response_max_bytes,
            )
            budget -= len(result.records)
            results.append(result)
        return results

    async def wait_for_data(
        self,
        requests: Sequence[FetchRequestPartition],
        isolation_level: int,
        min_bytes: int,
        timeout_s: float,
    ) -> None:
        def enough() -> bool:
            return self.available_bytes(requests, isolation_level) >= min_bytes

        await self.fetch_waiters.wait_until(
            [(r.topic, r.partition) for r in requests], enough, timeout_s
        )

    def available_bytes(
        self, requests: Sequence[FetchRequestPartition], isolation_level: int
    ) -> int:
        """Bytes a fetch would return now; any error counts as data, to answer at once."""
        total = 0
        for request in requests:
            partition = self.partitions.get((request.topic, request.partition))
            if partition is None or not partition.is_leader:
                return 1 << 30
            bound = partition.fetch_offset_upper_bound(
                FOLLOWER_READ if request.replica_id >= 0 else isolation_level
            )
            if request.fetch_offset > partition.log_end_offset or (
                request.fetch_offset < partition.log_start_offset
            ):
                return 1 << 30
            if 0 <= request.log_start_offset < partition.log_start_offset:
                return 1 << 30  # a follower to tell at once that its log start must move
            if request.replica_id >= 0 and partition.follower_lacks_high_watermark(
                request.replica_id
            ):
                return 1 << 30  # a follower to tell at once that the HW moved
            total += partition.log.bytes_between(request.fetch_offset, bound)
        return total

    # ---- deleting records ------------------------------------------------------------

    def delete_records(self, topic: str, index: int, offset: int) -> None:
        """DeleteRecords on this leader: move its log start to ``offset`` (at most the HW).
        Followers learn it from their next fetch; :meth:`wait_for_low_watermark` waits
        for that. Raises ``KafkaError``."""
        partition = self.get_partition(topic, index)
        partition.check_leader()
        if offset < 0 or offset > partition.high_watermark:
            raise KafkaError(
                ErrorCode.offset_out_of_range,
                f"offset {offset} is outside [0, high watermark {partition.high_watermark}]",
            )
        if partition.log.maybe_increment_log_start_offset(offset):
            self.events.emit(
                EventType.RECORDS_DELETED,
                topic=topic,
                partition=index,
                log_start_offset=partition.log_start_offset,
            )
            self.fetch_waiters.notify((topic, index))

    async def wait_for_low_watermark(
        self, topic: str, index: int, offset: int, timeout_s: float
    ) -> tuple[ErrorCode, int]:
        """Kafka's ``DelayedDeleteRecords``: DeleteRecords answers once every live
        replica's log start has reached ``offset``, so no replica that could lead later
        still serves the deleted records. Returns the error and the low watermark."""
        key = (topic, index)

        def low_watermark() -> int:
            partition = self.partitions.get(key)
            if partition is None or not partition.is_leader:
                return -1
            return partition.low_watermark(self.is_broker_alive)

        done = await self.delete_records_waiters.wait_until(
            [key], lambda: low_watermark() >= offset, timeout_s
        )
        low = low_watermark()
        if done:
            return ErrorCode.none, low
        partition = self.partitions.get(key)
        if partition is None or not partition.is_leader:
            return ErrorCode.not_leader_or_follower, -1
        return ErrorCode.request_timed_out, low

    def is_broker_alive(self, broker_id: int) -> bool:
        """Registered and unfenced: a fenced broker leads nothing and holds up nothing."""
        registration = self.image.brokers.get(broker_id)
        return registration is not None and not registration.fenced

    # ---- retention -------------------------------------------------------------------

    def enforce_retention(self) -> None:
        """Retention over every hosted partition, never above its high watermark (so no
        replica deletes what is not yet committed)."""
        for (topic, index), partition in list(self.partitions.items()):
            if partition.log.enforce_retention(partition.high_watermark):
                self.events.emit(
                    EventType.LOG_START_ADVANCED,
                    topic=topic,
                    partition=index,
                    log_start_offset=partition.log_start_offset,
                    reason="retention",
                )

    def close(self) -> None:
        self.logs.close_all()
