"""One task of the exactly-once sink: its rows and its batch record in one Kafka transaction.

Runs in a Spark Python worker (the writer in :mod:`kafkalite.spark.exactly_once` imports
it there, so the processes that only plan or commit a query never load librdkafka). The
task:

1. makes a producer with the task's transactional id; its ``init_transactions`` fences
   any older instance with that id (a zombie task from before a crash) and ends the
   transaction it left open;
2. asks which batch this id last committed, with a consumer of the group named like the
   id (kept by the worker: :mod:`kafkalite.spark.kept_consumers`): the offset that group
   committed on ``(first topic written, partition 0)`` is ``b + 1`` after batch ``b``. If
   it is past this batch, the rows are already in the topic: nothing is written again;
3. otherwise sends the rows and commits that offset *in the same transaction*
   (``send_offsets_to_transaction``, Kafka's consume-transform-produce mechanism), then
   commits: the rows and the record of the batch become visible together, or not at all.

Step 2 comes after step 1, so it reads what the newest producer of the id committed (an
older one can no longer commit).

A producer told it is fenced is dead for good (librdkafka makes the error fatal, as
KIP-588 does for Kafka's clients): the task starts again at step 1 with a new producer,
whose ``init_transactions`` fences in turn whichever instance fenced it, and step 2 then
finds the batch record if that instance had committed the batch. The fence need not come
from another instance of the task. A partition leader cut off from the cluster (isolated,
not yet fenced by the controller) that also coordinated the transactional id still
believes it does: when the task's first write of a transaction reaches it, it verifies
the write (KIP-890) against the producer epoch it last knew, and refuses the newer epoch
the real coordinator has since given out as fenced (PRODUCER_FENCED, sent to the producer
as INVALID_PRODUCER_EPOCH), exactly as Kafka's ``TransactionCoordinator`` does. That lasts
until the controller fences the leader (``broker.session.timeout.ms``) and the producers
move to the new one, within the task's time bound.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

from confluent_kafka import KafkaError, KafkaException, TopicPartition

from kafkalite.spark.exactly_once import already_written, batch_marker, transactional_id
from kafkalite.spark.kept_consumers import KEPT
from kafkalite.spark.options import SinkOptions
from kafkalite.spark.producing import make_producer, send_all
from kafkalite.spark.send_offsets import is_wedged, send_offsets_to_transaction
from kafkalite.spark.sink import SinkCommitMessage, log
from kafkalite.spark.sink_rows import KafkaRecord

MAX_ATTEMPTS = 5
RETRY_BACKOFF_S = 0.1
COORDINATOR_MOVED = (
    KafkaError.NOT_COORDINATOR,
    KafkaError.COORDINATOR_NOT_AVAILABLE,
    KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
)
FENCED = (KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH)


def is_fenced(error: KafkaError) -> bool:
    """The producer was told a newer instance of its transactional id exists: fatal."""
    return error.code() in FENCED


class ExactlyOnceTask:
    """One task's transactional write of one micro-batch."""

    def __init__(self, options: SinkOptions, query_id: str, batch_id: int, partition: int) -> None:
        self.options = options
        self.batch_id = batch_id
        self.partition = partition
        self.transactional_id = transactional_id(query_id, partition)
        self.timeout_s = options.connection.timeout_ms / 1000

    def run(self, records: list[KafkaRecord]) -> SinkCommitMessage:
        """Write the batch once; a fenced producer starts the task over (module docstring)
        until the time bound."""
        if not records:
            return SinkCommitMessage(self.partition, 0)
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                return self._write(records)
            except KafkaException as exc:
                error: KafkaError = exc.args[0]
                if not is_fenced(error) or time.monotonic() >= deadline:
                    raise
                log.warning(
                    "kafkalite sink: %s batch %d: producer fenced (%s); starting over",
                    self.transactional_id,
                    self.batch_id,
                    error.str(),
                )
                time.sleep(RETRY_BACKOFF_S)

    def _write(self, records: list[KafkaRecord]) -> SinkCommitMessage:
        """Steps 1 to 3 with a new producer."""
        conn = self.options.connection
        producer = self._new_producer()
        group_config = conn.client_config(
            **{
                "group.id": self.transactional_id,
                "isolation.level": "read_committed",
                "enable.auto.commit": False,
            }
        )
        with KEPT.borrow(group_config) as group:
            marker = TopicPartition(batch_marker(records), 0)
            committed = self._retry(
                lambda: group.consumer.committed([marker], timeout=self.timeout_s)
            )
            if already_written(committed[0].offset, self.batch_id):
                return SinkCommitMessage(self.partition, 0, replayed=True)
            marker.offset = self.batch_id + 1
            metadata = group.consumer.consumer_group_metadata()
        self._transaction(producer, records, marker, metadata)
        return SinkCommitMessage(self.partition, len(records))

    def _new_producer(self) -> Any:
        """A producer of the task's transactional id; its ``init_transactions`` fences any
        older one and has the coordinator abort what that one left open."""
        producer = make_producer(
            self.options.connection, **{"transactional.id": self.transactional_id}
        )
        self._retry(lambda: producer.init_transactions(self.timeout_s))
        return producer

    def _transaction(
        self, producer: Any, records: list[KafkaRecord], marker: TopicPartition, metadata: Any
    ) -> None:
        """Abortable failures abort and try again; a wedged producer (see
        :mod:`kafkalite.spark.send_offsets`) is replaced, which aborts its transaction."""
        for attempt in range(1, MAX_ATTEMPTS + 1):
            producer.begin_transaction()
            errors: list[str] = []
            try:
                send_all(producer, records, errors)
                send_offsets_to_transaction(producer, [marker], metadata, self.timeout_s)
                self._retry(partial(producer.commit_transaction, self.timeout_s))
                return
            except KafkaException as exc:
                error: KafkaError = exc.args[0]
                wedged = is_wedged(error)
                if not (error.txn_requires_abort() or wedged) or attempt == MAX_ATTEMPTS:
                    raise
                log.warning(
                    "kafkalite sink: %s batch %d: transaction aborted (%s), attempt %d",
                    self.transactional_id,
                    self.batch_id,
                    error.str(),
                    attempt,
                )
                if wedged:
                    producer = self._new_producer()
                else:
                    self._retry(partial(producer.abort_transaction, self.timeout_s))

    def _retry(self, call: Any) -> Any:
        """Call again while the error is retriable (a coordinator or leader moving), up to
        the time bound; any other error fails the task. A kept group consumer that asks
        a broker which is no longer its group's coordinator gets NOT_COORDINATOR, which
        librdkafka does not flag retriable but answers by looking the coordinator up
        again (Kafka's own clients retry it)."""
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                return call()
            except KafkaException as exc:
                error: KafkaError = exc.args[0]
                retriable = error.retriable() or error.code() in COORDINATOR_MOVED
                if not retriable or time.monotonic() >= deadline:
                    raise
                time.sleep(RETRY_BACKOFF_S)
