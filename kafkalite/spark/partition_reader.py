"""One Spark task's read: for each of its ranges, the records ``[start, end)`` of one
partition, exactly, or an error.

Runs inside a Spark executor's Python worker. Spark may run it again for the same ranges
(a retried task, a micro-batch replayed after a driver crash), and the exactly-once story
rests on it giving the same records every time: it reads until it has passed ``end - 1``,
and raises rather than return fewer records. The task's one Kafka consumer is made (or
kept from an earlier task) in the worker, never pickled from the driver, and reads its
ranges one after another.

The end of a range is not always a record a consumer can see: under ``read_committed`` a
commit marker or an aborted transaction may stand there. librdkafka moves the consumer's
position past those, so "position >= end" also means done.

Records become Arrow record batches (Spark's Python data sources accept them directly),
which keeps a 1 KiB record's cost in Python small.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from confluent_kafka import Consumer, KafkaError, TopicPartition

from kafkalite.spark.kept_consumers import KEPT, ClientErrors
from kafkalite.spark.offsets import DATA_LOSS_HINT, DataLossError, OffsetRange
from kafkalite.spark.options import Isolation, KafkaConnection

BATCH_ROWS = 8192
POLL_S = 0.2
FETCH_WAIT_MAX_MS = 100
FETCH_QUEUE_BACKOFF_MS = 10

HEADERS = pa.list_(pa.struct([("key", pa.string()), ("value", pa.binary())]))
BASE_FIELDS = [
    ("key", pa.binary()),
    ("value", pa.binary()),
    ("topic", pa.string()),
    ("partition", pa.int32()),
    ("offset", pa.int64()),
    ("timestamp", pa.timestamp("us", tz="UTC")),
    ("timestampType", pa.int32()),
]

# librdkafka's timestamp types -> Kafka's ids, which Spark's timestampType column shows.
TIMESTAMP_TYPE = {1: 0, 2: 1}  # CreateTime, LogAppendTime

SPARK_SCHEMA = (
    "key binary, value binary, topic string, partition int, offset long, "
    "timestamp timestamp, timestampType int"
)
SPARK_HEADERS = ", headers array<struct<key: string, value: binary>>"


def spark_schema(include_headers: bool) -> str:
    """Spark's Kafka source schema (``headers`` only with ``includeHeaders``)."""
    return SPARK_SCHEMA + (SPARK_HEADERS if include_headers else "")


@dataclass(frozen=True, slots=True)
class ReadSettings:
    """Everything a task needs besides its range: small, frozen, picklable."""

    connection: KafkaConnection
    isolation: Isolation
    include_headers: bool
    fail_on_data_loss: bool


class _Columns:
    """Column lists of the rows read so far, flushed as one Arrow batch."""

    def __init__(self, include_headers: bool) -> None:
        self.fields = BASE_FIELDS + ([("headers", HEADERS)] if include_headers else [])
        self.columns: list[list[Any]] = [[] for _ in self.fields]

    def add(self, message: Any) -> None:
        kind, ms = message.timestamp()
        row = (
            message.key(),
            message.value(),
            message.topic(),
            message.partition(),
            message.offset(),
            ms * 1000 if ms >= 0 else None,
            TIMESTAMP_TYPE.get(kind),
            [{"key": k, "value": v} for k, v in (message.headers() or [])],
        )
        for column, value in zip(self.columns, row[: len(self.columns)], strict=True):
            column.append(value)

    def __len__(self) -> int:
        return len(self.columns[0])

    def flush(self) -> pa.RecordBatch:
        arrays = [pa.array(c, type=t) for c, (_, t) in zip(self.columns, self.fields, strict=True)]
        self.columns = [[] for _ in self.fields]
        return pa.RecordBatch.from_arrays(arrays, names=[name for name, _ in self.fields])


def reader_config(settings: ReadSettings) -> dict[str, Any]:
    """The task consumer's librdkafka settings. ``fetch.wait.max.ms`` is 100 ms unless the
    query sets ``kafka.fetch.wait.max.ms``: a kept consumer's last Fetch of its previous
    task may still be held by the broker, waiting for records that do not come, and
    librdkafka sends the next task's first Fetch to that broker only once it returns. A
    task that follows at once (a big batch's next range on the same worker) waited 0.50 s
    for its first record with librdkafka's 500 ms default, 0.10 s with 100 ms; between
    micro-batches half a second apart the held Fetch has mostly returned already. A task
    reads records that are already there, so a shorter wait costs it nothing.

    ``fetch.queue.backoff.ms`` is 10 ms unless the query sets it: librdkafka (since 2.1)
    stops fetching a partition for that long, 1000 ms by default, whenever its queue holds
    ``queued.min.messages`` (100,000) or ``queued.max.messages.kbytes`` (64 MiB); a
    Python task turning records into Arrow columns is slower than the fetcher, so a big
    range filled the queue and then waited a second for each refill."""
    config = settings.connection.client_config(
        **{
            "group.id": "kafkalite-spark-reader",  # never joins, never commits
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "auto.offset.reset": "error",
            "isolation.level": settings.isolation,
        }
    )
    config.setdefault("fetch.wait.max.ms", FETCH_WAIT_MAX_MS)
    config.setdefault("fetch.queue.backoff.ms", FETCH_QUEUE_BACKOFF_MS)
    return config


def read_ranges(settings: ReadSettings, ranges: Sequence[OffsetRange]) -> Iterator[pa.RecordBatch]:
    """One task's read: its ranges in order, with one consumer (kept by this worker for
    its next task: :mod:`kafkalite.spark.kept_consumers`)."""
    ranges = [r for r in ranges if r.size > 0]
    if not ranges:
        return
    with KEPT.borrow(reader_config(settings)) as kept:
        for r in ranges:
            yield from RangeReader(settings, r, kept.errors).read(kept.consumer)
        kept.consumer.unassign()  # a kept consumer fetches nothing until its next task


class RangeReader:
    """Reads one :class:`OffsetRange` with a consumer: ``read`` yields Arrow batches."""

    def __init__(
        self, settings: ReadSettings, offset_range: OffsetRange, errors: ClientErrors
    ) -> None:
        self.settings = settings
        self.range = offset_range
        self.next_offset = offset_range.start
        self.errors = errors

    def read(self, consumer: Consumer) -> Iterator[pa.RecordBatch]:
        r = self.range
        consumer.assign([TopicPartition(r.topic, r.partition, r.start)])
        rows = _Columns(self.settings.include_headers)
        timeout_s = self.settings.connection.timeout_ms / 1000
        stalled_since = time.monotonic()
        while self.next_offset < r.end:
            messages = consumer.consume(min(r.end - self.next_offset, BATCH_ROWS), POLL_S)
            progressed = self._take(consumer, messages, rows)
            if self.next_offset < r.end:
                position = consumer.position([TopicPartition(r.topic, r.partition)])[0].offset
                if position > self.next_offset:  # past commit markers or aborted records
                    self.next_offset, progressed = min(position, r.end), True
            if len(rows) >= BATCH_ROWS:
                yield rows.flush()
            if progressed:
                stalled_since = time.monotonic()
            elif time.monotonic() - stalled_since > timeout_s:
                raise TimeoutError(
                    f"kafkalite: reading {r.topic}-{r.partition} [{r.start}, {r.end}) stalled "
                    f"at offset {self.next_offset} for {timeout_s:.0f} s "
                    f"(kafkaConsumer.pollTimeoutMs); last client error: {self.errors.last}"
                )
        if len(rows):
            yield rows.flush()

    def _take(self, consumer: Consumer, messages: list[Any], rows: _Columns) -> bool:
        """Add the messages inside the range to ``rows``; True if the read moved on."""
        r, progressed = self.range, False
        for message in messages:
            if message.error() is not None:
                self._on_error(consumer, message.error())
                continue
            offset = message.offset()
            if (message.topic(), message.partition()) != (r.topic, r.partition):
                continue  # the range read before on this consumer: not this one's
            if offset < self.next_offset:
                continue  # already read (a re-assignment after an error)
            if offset >= r.end:
                self.next_offset = r.end
                return True
            rows.add(message)
            self.next_offset = offset + 1
            progressed = True
        return progressed

    def _on_error(self, consumer: Consumer, error: KafkaError) -> None:
        """Out of range (retention deleted records, or the topic was re-created) is data
        loss; everything else is retried by librdkafka and only noted."""
        r = self.range
        lost = error.code() in (KafkaError._AUTO_OFFSET_RESET, KafkaError.OFFSET_OUT_OF_RANGE)
        gone = error.code() in (KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_PARTITION)
        if not (lost or gone):
            self.errors.last = str(error)
            return
        where = f"{r.topic}-{r.partition} at offset {self.next_offset} (range [{r.start}, {r.end}))"
        if self.settings.fail_on_data_loss:
            raise DataLossError(f"kafkalite: cannot read {where}: {error.str()}. {DATA_LOSS_HINT}")
        if gone:
            self.next_offset = r.end
            return
        low, _ = consumer.get_watermark_offsets(
            TopicPartition(r.topic, r.partition), timeout=self.settings.connection.timeout_ms / 1000
        )
        self.next_offset = max(self.next_offset, min(low, r.end))
        consumer.assign([TopicPartition(r.topic, r.partition, self.next_offset)])
