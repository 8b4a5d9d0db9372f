"""The ``kafkalite`` sink, at least once: ``df.write`` and ``df.writeStream`` as Spark's
own Kafka sink does it.

Each task sends its rows with an idempotent ``acks=all`` producer and waits until every
record is acknowledged, so a finished micro-batch is durable. It is *at least* once: a
task retried, or a micro-batch replayed after the driver died, sends its rows again and
the topic holds them twice. :mod:`kafkalite.spark.exactly_once` is the sink that
recognises a replay.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSourceStreamWriter, DataSourceWriter, WriterCommitMessage

from kafkalite.spark.options import SinkOptions
from kafkalite.spark.producing import flush_or_raise, make_producer, send_all
from kafkalite.spark.sink_rows import to_record

log = logging.getLogger("kafkalite.spark")


@dataclass(frozen=True)
class SinkCommitMessage(WriterCommitMessage):
    """What one task did: records written, or recognised as already written."""

    partition: int
    written: int
    replayed: bool = False


def write_at_least_once(options: SinkOptions, rows: Iterator[Any]) -> SinkCommitMessage:
    from pyspark import TaskContext  # noqa: PLC0415 (executors only)

    context = TaskContext.get()
    producer = make_producer(options.connection)
    errors: list[str] = []
    written = send_all(producer, (to_record(row, options.topic) for row in rows), errors)
    flush_or_raise(producer, errors, options.connection.timeout_ms / 1000)
    return SinkCommitMessage(context.partitionId() if context else 0, written)


def summarise(messages: list[WriterCommitMessage | None]) -> str:
    done = [m for m in messages if isinstance(m, SinkCommitMessage)]
    written = sum(m.written for m in done)
    replays = sum(m.replayed for m in done)
    return f"{len(done)} task(s) wrote {written} record(s), {replays} recognised as replays"


class KafkaLiteBatchWriter(DataSourceWriter):
    def __init__(self, options: SinkOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[Any]) -> SinkCommitMessage:
        return write_at_least_once(self.options, iterator)


class KafkaLiteStreamWriter(DataSourceStreamWriter):
    def __init__(self, options: SinkOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[Any]) -> SinkCommitMessage:
        return write_at_least_once(self.options, iterator)

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        log.info("kafkalite sink: batch %d: %s", batchId, summarise(messages))

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        log.warning(
            "kafkalite sink: batch %d aborted after %s; what was acknowledged stays "
            "(at-least-once: the retry writes it again)",
            batchId,
            summarise(messages),
        )
