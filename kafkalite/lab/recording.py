"""kafka-python's own producer and consumer, recording what they do into a History.

The classes below *are* ``KafkaProducer`` and ``KafkaConsumer`` (subclasses that add one
line of bookkeeping to ``send``, ``poll``, iteration, ``seek`` and ``commit``), so what a
student learns with them is kafka-python, unchanged. ``read_final_log`` reads what the
cluster finally kept, the other half of what the history checker needs.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaError

from kafkalite.checker.history import Partition
from kafkalite.lab.history import History, Op, OpKind


def _as_bytes(value: Any, serializer: Callable[[Any], bytes] | None) -> bytes | None:
    """The record's value as it goes on the wire (what the final log will hold)."""
    if value is None or isinstance(value, bytes):
        return value
    if serializer is not None:
        return serializer(value)
    return str(value).encode()


def never_auto_create(metadata: Any) -> None:
    """Make a kafka-python client's Metadata requests ask for no topic to be created.

    kafka-python 3.0 builds its ``ClusterMetadata`` without the client's
    ``allow_auto_create_topics``, so every Metadata request it sends asks the broker to
    create a missing topic (``auto.create.topics.enable``), whatever that setting says. A
    client left open on a topic that a lab deletes to create afresh then brings it back in
    the broker's default shape (one partition, one replica) before the lab can create it.
    The setting is read where each request is built, so it is set there."""
    metadata.config["allow_auto_create_topics"] = False


class RecordingProducer(KafkaProducer):  # type: ignore[misc]  # kafka-python is untyped
    """A ``KafkaProducer`` whose every send, ack and error lands in ``history``."""

    def __init__(self, history: History, **configs: Any) -> None:
        super().__init__(**configs)
        never_auto_create(self._metadata)
        self.history = history
        self.name: str = self.config["client_id"]

    def send(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        headers: Any = None,
        partition: int | None = None,
        timestamp_ms: int | None = None,
    ) -> Any:
        wire_value = _as_bytes(value, self.config["value_serializer"])
        sent = time.monotonic()

        def record(kind: OpKind, part: int | None, **fields: Any) -> None:
            self.history.record(Op(time.time(), kind, self.name, topic, part, wire_value, **fields))

        def acked(metadata: Any) -> None:
            offset = metadata.offset if metadata.offset >= 0 else None  # acks=0: no offset
            latency = (time.monotonic() - sent) * 1000
            record(OpKind.ACK, metadata.partition, offset=offset, latency_ms=latency)

        def failed(exc: BaseException) -> None:
            latency = (time.monotonic() - sent) * 1000
            record(OpKind.ERROR, partition, latency_ms=latency, error=type(exc).__name__)

        record(OpKind.SEND, partition)
        try:
            future = super().send(topic, value, key, headers, partition, timestamp_ms)
        except KafkaError as exc:  # e.g. no metadata within max_block_ms
            failed(exc)
            raise
        future.add_callback(acked)
        future.add_errback(failed)
        return future


class RecordingConsumer(KafkaConsumer):  # type: ignore[misc]  # kafka-python is untyped
    """A ``KafkaConsumer`` whose every record received and every commit lands in
    ``history``; after a seek or an assignment the next read is marked as one."""

    def __init__(self, history: History, *topics: str, **configs: Any) -> None:
        self.history = history
        self._seeked: set[TopicPartition] = set()
        super().__init__(*topics, **configs)
        never_auto_create(self._cluster)
        self.name: str = self.config["client_id"]

    def _record_read(self, record: Any) -> None:
        tp = TopicPartition(record.topic, record.partition)
        seek = tp in self._seeked
        self._seeked.discard(tp)
        self.history.record(
            Op(
                time.time(),
                OpKind.READ,
                self.name,
                record.topic,
                record.partition,
                _as_bytes(record.value, None),
                offset=record.offset,
                seek=seek,
            )
        )

    def poll(
        self, timeout_ms: int = 0, max_records: int | None = None, update_offsets: bool = True
    ) -> dict[Any, list[Any]]:
        result: dict[Any, list[Any]] = super().poll(timeout_ms, max_records, update_offsets)
        if update_offsets:  # iteration polls without updating, and records in __next__
            for records in result.values():
                for record in records:
                    self._record_read(record)
        return result

    def __next__(self) -> Any:
        record = super().__next__()
        self._record_read(record)
        return record

    def assign(self, partitions: Iterable[TopicPartition]) -> None:
        partitions = list(partitions)
        self._seeked.update(partitions)
        super().assign(partitions)

    def seek(self, partition: TopicPartition, offset: int) -> None:
        self._seeked.add(partition)
        super().seek(partition, offset)

    def seek_to_beginning(self, *partitions: TopicPartition) -> None:
        self._seeked.update(partitions or self.assignment())
        super().seek_to_beginning(*partitions)

    def seek_to_end(self, *partitions: TopicPartition) -> None:
        self._seeked.update(partitions or self.assignment())
        super().seek_to_end(*partitions)

    def commit(self, offsets: dict[Any, Any] | None = None, timeout_ms: int | None = None) -> None:
        # what commit() commits by default: kafka-python's own "consumed offsets"
        chosen = offsets if offsets is not None else self._subscription.all_consumed_offsets()
        super().commit(chosen, timeout_ms)
        now = time.time()
        for tp, meta in chosen.items():
            offset = meta.offset if hasattr(meta, "offset") else int(meta)
            self.history.record(
                Op(
                    now,
                    OpKind.COMMIT,
                    self.config["group_id"],
                    tp.topic,
                    tp.partition,
                    None,
                    offset,
                )
            )


FINAL_LOG_CONSUMER: dict[str, Any] = {
    "enable_auto_commit": False,
    "request_timeout_ms": 5000,
    "client_id": "kafkalite-final-log",
    "metadata_max_age_ms": 1000,
    "reconnect_backoff_max_ms": 1000,
}
"""The final-log reader's settings. ``metadata_max_age_ms``: kafka-python 3.0.12 answers a
ListOffsets partition error (NOT_LEADER_OR_FOLLOWER) by asking the same broker again at
once, without refreshing its metadata, so a reader whose first Metadata answer named a
leader that has since moved (a broker that had not yet replayed the election, right after
a fault) asks that broker until its timeout; with its default of five minutes the check
of lab 04 failed after 30 s. Refreshed every second, it finds the leader within one."""


def read_final_log(
    bootstrap_servers: str,
    partitions: Iterable[Partition],
    timeout_s: float = 30,
    isolation_level: str = "read_uncommitted",
) -> dict[Partition, dict[int, bytes]]:
    """Every record of ``partitions`` from the log start up to the high watermark, i.e.
    everything committed now (``read_committed``: up to the last stable offset, without
    aborted transactions' records); raises TimeoutError if a partition cannot be read in
    time."""
    wanted = sorted(set(partitions))
    log: dict[Partition, dict[int, bytes]] = {p: {} for p in wanted}
    if not wanted:
        return log
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap_servers, isolation_level=isolation_level, **FINAL_LOG_CONSUMER
    )
    try:
        tps = [TopicPartition(t, p) for t, p in wanted]
        consumer.assign(tps)
        consumer.seek_to_beginning(*tps)
        deadline = time.monotonic() + timeout_s
        # The whole budget, not request_timeout_ms: right after a failover the client may
        # need a metadata refresh or two (FINAL_LOG_CONSUMER) before a leader answers.
        ends: dict[TopicPartition, int] = consumer.end_offsets(
            tps, timeout_ms=int(timeout_s * 1000)
        )
        while any(consumer.position(tp) < ends[tp] for tp in tps):
            if time.monotonic() > deadline:
                behind = [
                    f"{tp.topic}-{tp.partition}" for tp in tps if consumer.position(tp) < ends[tp]
                ]
                raise TimeoutError(f"could not read {', '.join(behind)} to the high watermark")
            for tp, records in consumer.poll(500).items():
                for record in records:
                    if record.offset < ends[tp]:
                        log[(tp.topic, tp.partition)][record.offset] = record.value
    finally:
        consumer.close()
    return log
