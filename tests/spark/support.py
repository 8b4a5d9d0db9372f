"""Writing and reading topics with librdkafka, and waiting on streaming queries, for the
Spark tests: the checks read what Kafka holds, with a client that is not the one under test."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from confluent_kafka import (
    Consumer,
    IsolationLevel,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, OffsetSpec
from pyspark.sql.streaming import StreamingQuery

from kafkalite.spark.lookup import is_transient
from tests.support.waiting import wait_for


@dataclass(frozen=True)
class Record:
    partition: int
    offset: int
    key: bytes | None
    value: bytes
    headers: tuple[tuple[str, bytes], ...] = ()


def produce(
    bootstrap: str,
    topic: str,
    values: Iterable[bytes],
    partition: int | None = None,
    key: bytes | None = None,
    headers: list[tuple[str, bytes]] | None = None,
) -> int:
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    errors: list[object] = []
    count = 0
    for value in values:
        kwargs: dict[str, Any] = {"key": key, "headers": headers}
        if partition is not None:
            kwargs["partition"] = partition
        producer.produce(
            topic, value, on_delivery=lambda e, _m: errors.append(e) if e else None, **kwargs
        )
        count += 1
    assert producer.flush(60) == 0 and not errors, errors
    return count


def end_offsets(bootstrap: str, topic: str, isolation: str = "read_committed") -> dict[int, int]:
    """Each partition's end offset (the last stable offset under read_committed).

    Asked again while a partition's answer is an error a failover causes: after a fault,
    the controller moves leadership back to the preferred replicas, so a leader named by
    the admin client's metadata may have moved by the time ListOffsets reaches it
    (NOT_LEADER_OR_FOLLOWER), or the new leader's high watermark may still be behind its
    epoch's start (OFFSET_NOT_AVAILABLE, as in Kafka). Kafka's Java admin client refreshes
    and retries such errors itself (``ListOffsetsHandler``: both are retriable there);
    librdkafka's hands them to the caller."""
    level = (
        IsolationLevel.READ_COMMITTED
        if isolation == "read_committed"
        else IsolationLevel.READ_UNCOMMITTED
    )
    ends: dict[int, int] = {}

    def ask() -> bool:
        admin = AdminClient({"bootstrap.servers": bootstrap})  # fresh metadata each round
        partitions = admin.list_topics(topic, timeout=30).topics[topic].partitions
        futures = admin.list_offsets(
            {TopicPartition(topic, p): OffsetSpec.latest() for p in partitions if p not in ends},
            isolation_level=level,
            request_timeout=30,
        )
        for tp, future in futures.items():
            try:
                offset = future.result().offset
            except KafkaException as exc:
                if not is_transient(exc.args[0]):
                    raise
                continue
            if offset >= 0:  # librdkafka's -1001: the request to a dead leader timed out
                ends[tp.partition] = offset
        return len(ends) == len(partitions)

    wait_for(ask, 60, f"the end offsets of {topic}")
    return ends


def read_topic(bootstrap: str, topic: str, isolation: str = "read_committed") -> list[Record]:
    """Every record a consumer with ``isolation`` sees now, by partition and offset."""
    ends = end_offsets(bootstrap, topic, isolation)
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "tests-reader",
            "enable.auto.commit": False,
            "isolation.level": isolation,
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in ends])
    records: list[Record] = []
    deadline = time.monotonic() + 60
    try:
        while True:
            positions = {
                tp.partition: tp.offset
                for tp in consumer.position([TopicPartition(topic, p) for p in ends])
            }
            if all(positions[p] >= end for p, end in ends.items()):
                break
            assert time.monotonic() < deadline, f"read {topic}: {positions} of {ends}"
            for m in consumer.consume(1000, 0.5):
                if m.error() is None:
                    headers = tuple(m.headers() or ())
                    records.append(Record(m.partition(), m.offset(), m.key(), m.value(), headers))
    finally:
        consumer.close()
    return sorted(records, key=lambda r: (r.partition, r.offset))


def source_end(query: StreamingQuery) -> dict[str, dict[str, int]]:
    """The end offsets of the query's last finished micro-batch (Spark's progress)."""
    progress = query.lastProgress
    if not progress or not progress["sources"] or not progress["sources"][0]["endOffset"]:
        return {}
    end = progress["sources"][0]["endOffset"]
    return json.loads(end) if isinstance(end, str) else end


def still_running(query: StreamingQuery) -> StreamingQuery:
    """The query, or its failure as the test's: a wait on a failed query would otherwise
    wait out its whole time and report only that it did."""
    if query.exception() is not None:
        raise AssertionError(f"query failed: {query.exception()}")
    return query


def wait_until_read(query: StreamingQuery, topic: str, total: int, timeout_s: float = 90) -> None:
    """Until the query has finished a micro-batch that ends at ``total`` records of ``topic``."""

    def caught_up() -> bool:
        return sum(source_end(still_running(query)).get(topic, {}).values()) >= total

    wait_for(caught_up, timeout_s, f"{query.name or query.id} to read {total} records")


def wait_for_batches(query: StreamingQuery, after: int, timeout_s: float, what: str) -> int:
    """Until the query has finished a micro-batch with an id above ``after`` (or failed);
    returns that id."""

    def batch_id() -> int | None:
        progress = still_running(query).lastProgress
        return progress["batchId"] if progress and progress["batchId"] > after else None

    return wait_for(batch_id, timeout_s, what)


def run_to_end(start: Callable[[], StreamingQuery], timeout_s: float = 240) -> None:
    """Run an ``availableNow`` query to its end; its error, if it fails, is raised here."""
    query = start()
    assert query.awaitTermination(timeout_s), f"the query did not finish in {timeout_s} s"
    assert query.exception() is None, query.exception()


def forget_last_commit(checkpoint: Path) -> int:
    """Delete the checkpoint's record that its last micro-batch committed, as if the driver
    died after the sink wrote it and before Spark recorded it: the next run replays it.
    Returns that batch's id."""
    commits = sorted((checkpoint / "commits").glob("[0-9]*"), key=lambda p: int(p.name))
    last = commits[-1]
    last.unlink()
    (checkpoint / "commits" / f".{last.name}.crc").unlink(missing_ok=True)  # Spark's checksum
    return int(last.name)
