"""The exactly-once streaming sink: each task of a micro-batch writes in one Kafka
transaction that also records the batch id, so a replayed batch is recognised.

Spark replays a micro-batch after a crash with the same input offsets, so task ``p`` of
batch ``b`` writes the same rows every time it runs. It writes them with a producer whose
``transactional.id`` is derived from the query id (kept in the checkpoint, so it survives
restarts) and the task's partition: ``kafkalite-spark-<query id>-<partition>``, together
with the record of the batch, in one transaction; a replay finds that record and writes
nothing (:mod:`kafkalite.spark.exactly_once_task` has the steps).

A read_committed consumer of the output therefore sees each task's rows exactly once.
The batch as a whole is not atomic: its tasks commit one by one, so a reader can see
part of a batch before the rest (never a part twice).

This module is what Spark pickles and runs on the driver side too (``commit`` and
``abort`` run in a Python process of their own, for every micro-batch): it imports no
Kafka client, and the task's module only in ``write``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pyspark.sql.datasource import DataSourceStreamWriter, WriterCommitMessage

from kafkalite.spark.options import SinkOptions
from kafkalite.spark.sink import SinkCommitMessage, log, summarise
from kafkalite.spark.sink_rows import to_record

if TYPE_CHECKING:
    from kafkalite.spark.sink_rows import KafkaRecord


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
        from kafkalite.spark.exactly_once_task import ExactlyOnceTask  # noqa: PLC0415 (executors)

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
