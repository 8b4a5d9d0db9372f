"""The exactly-once streaming sink: each task of a micro-batch writes in one Kafka
transaction that also records the batch id, so a replayed batch is recognised.

Spark replays a micro-batch after a crash with the same input offsets, so task ``p`` of
batch ``b`` writes the same rows every time it runs. The task:

1. opens a transactional producer whose ``transactional.id`` is derived from the query id
   (kept in the checkpoint, so it survives restarts) and the task's partition:
   ``kafkalite-spark-<query id>-<partition>``. ``init_transactions`` fences any older
   instance with that id (a zombie task from before the crash) and ends the transaction
   it left open;
2. asks which batch this task last committed: the offset the group named like the
   transactional id committed on ``(first topic written, partition 0)`` is ``b + 1``
   after batch ``b``. If it is past ``b``, this batch's rows are already in the topic:
   nothing is written again;
3. otherwise sends the rows and commits that offset *in the same transaction*
   (``send_offsets_to_transaction``, Kafka's consume-transform-produce mechanism), then
   commits: the rows and the record of the batch become visible together, or not at all.

A read_committed consumer of the output therefore sees each task's rows exactly once.
The batch as a whole is not atomic: its tasks commit one by one, so a reader can see
part of a batch before the rest (never a part twice).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
from pyspark.sql.datasource import DataSourceStreamWriter, WriterCommitMessage

from kafkalite.spark.options import SinkOptions
from kafkalite.spark.producing import make_producer, send_all
from kafkalite.spark.sink import SinkCommitMessage, log, summarise
from kafkalite.spark.sink_rows import KafkaRecord, to_record

MAX_ATTEMPTS = 5


def transactional_id(query_id: str, partition: int) -> str:
    """Stable across restarts of the query (its id is in the checkpoint) and distinct per
    task partition, so only a zombie of the same task is ever fenced."""
    return f"kafkalite-spark-{query_id}-{partition}"


def batch_marker(records: list[KafkaRecord]) -> str:
    """Where the batch id is recorded: the first topic (by name) the task writes to. The
    same rows give the same topic, which is all a replay needs to find the record."""
    return min(r.topic for r in records)


def already_written(next_batch: int, batch_id: int) -> bool:
    """``next_batch`` is the committed offset (last committed batch + 1, or negative if
    none): a batch is a replay if a batch at or after it was committed."""
    return next_batch > batch_id


class ExactlyOnceTask:
    """One task's transactional write of one micro-batch."""

    def __init__(self, options: SinkOptions, query_id: str, batch_id: int, partition: int) -> None:
        self.options = options
        self.batch_id = batch_id
        self.partition = partition
        self.transactional_id = transactional_id(query_id, partition)
        self.timeout_s = options.connection.timeout_ms / 1000

    def run(self, records: list[KafkaRecord]) -> SinkCommitMessage:
        if not records:
            return SinkCommitMessage(self.partition, 0)
        conn = self.options.connection
        producer = make_producer(conn, **{"transactional.id": self.transactional_id})
        self._retry(lambda: producer.init_transactions(self.timeout_s))
        group = Consumer(
            conn.client_config(
                **{
                    "group.id": self.transactional_id,
                    "isolation.level": "read_committed",
                    "enable.auto.commit": False,
                }
            )
        )
        try:
            marker = TopicPartition(batch_marker(records), 0)
            committed = self._retry(lambda: group.committed([marker], timeout=self.timeout_s))
            if already_written(committed[0].offset, self.batch_id):
                return SinkCommitMessage(self.partition, 0, replayed=True)
            marker.offset = self.batch_id + 1
            self._transaction(producer, records, marker, group.consumer_group_metadata())
            return SinkCommitMessage(self.partition, len(records))
        finally:
            group.close()

    def _transaction(
        self, producer: Any, records: list[KafkaRecord], marker: TopicPartition, metadata: Any
    ) -> None:
        for attempt in range(1, MAX_ATTEMPTS + 1):
            producer.begin_transaction()
            errors: list[str] = []
            try:
                send_all(producer, records, errors)
                producer.send_offsets_to_transaction([marker], metadata, self.timeout_s)
                self._retry(lambda: producer.commit_transaction(self.timeout_s))
                return
            except KafkaException as exc:
                error: KafkaError = exc.args[0]
                if not error.txn_requires_abort() or attempt == MAX_ATTEMPTS:
                    raise
                log.warning(
                    "kafkalite sink: %s batch %d: transaction aborted (%s), attempt %d",
                    self.transactional_id,
                    self.batch_id,
                    error.str(),
                    attempt,
                )
                self._retry(lambda: producer.abort_transaction(self.timeout_s))

    def _retry(self, call: Any) -> Any:
        """Call again while librdkafka says the error is retriable (a coordinator or
        leader moving), up to the time bound; any other error fails the task."""
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                return call()
            except KafkaException as exc:
                error: KafkaError = exc.args[0]
                if not error.retriable() or time.monotonic() >= deadline:
                    raise
                time.sleep(0.1)


def task_identity() -> tuple[str, int, int]:
    """(query id, batch id, partition) of the running task, from the local properties
    Spark's micro-batch execution sets for every job it runs."""
    from pyspark import TaskContext  # noqa: PLC0415 (executors only)

    context = TaskContext.get()
    batch = context.getLocalProperty("streaming.sql.batchId") if context else None
    query = context.getLocalProperty("sql.streaming.queryId") if context else None
    if context is None or batch is None or query is None:
        raise RuntimeError("kafkalite: the exactly-once sink runs only in a streaming query")
    return query, int(batch), context.partitionId()


class ExactlyOnceStreamWriter(DataSourceStreamWriter):
    def __init__(self, options: SinkOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[Any]) -> SinkCommitMessage:
        query_id, batch_id, partition = task_identity()
        # kept in memory: an aborted transaction is retried with the same rows
        records = [to_record(row, self.options.topic) for row in iterator]
        return ExactlyOnceTask(self.options, query_id, batch_id, partition).run(records)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        log.info("kafkalite exactly-once sink: batch %d: %s", batchId, summarise(messages))

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        log.warning(
            "kafkalite exactly-once sink: batch %d failed after %s; committed tasks are "
            "recognised when the batch runs again",
            batchId,
            summarise(messages),
        )
