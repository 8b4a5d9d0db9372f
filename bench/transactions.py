"""Transactions on three brokers: transactional produce throughput with a commit every
100 ms against the idempotent figure, commit latency, and read_committed consumption.

Topic with 3 partitions, RF=3, min.insync.replicas=2 (as ``bench.replication``).
confluent-kafka, 1 KiB records, linger 5 ms, 1 MiB batches, a 4 MiB client buffer. The
idempotent run and the transactional run write the same number of records to their own
topics in the same cluster; the transactional producer ends its transaction whenever 100 ms
have passed since it began: it flushes (the records must be acknowledged before EndTxn) and
commits. Commit latency is the ``commit_transaction`` call after the flush: EndTxn,
PrepareCommit replicated, and the markers the client waits for no more than that. The
topic the transactional run wrote is then read back with read_committed and with
read_uncommitted. Run: ``.venv/bin/python -m bench.transactions``.
"""

from __future__ import annotations

import statistics
import time
import uuid
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition

from bench.common import bench_cluster, describe_or_run, record
from bench.replication import MB, RECORD, create_topic
from kafkalite.cluster import Cluster

COUNT = 100_000
COMMIT_EVERY_S = 0.1
# The client buffer is kept small (4 MiB), for both producers: with a large one, 100 ms of
# produce() calls would fill a transaction with seconds of backlog.
PRODUCER = {"linger.ms": 5, "batch.size": 1048576, "queue.buffering.max.kbytes": 4096}


def produce_all(producer: Producer, topic: str, between: Any = None) -> float:
    """Produce COUNT records as fast as the producer takes them; seconds it took."""
    start = time.perf_counter()
    for _ in range(COUNT):
        while True:
            try:
                producer.produce(topic, RECORD)
                break
            except BufferError:
                producer.poll(0.001)
        producer.poll(0)
        if between is not None:
            between()
    if between is None:
        producer.flush(300)
    return time.perf_counter() - start


def idempotent(cluster: Cluster) -> dict[str, Any]:
    topic = create_topic(cluster)
    producer = Producer(
        {"bootstrap.servers": cluster.bootstrap_servers, "enable.idempotence": True, **PRODUCER}
    )
    elapsed = produce_all(producer, topic)
    return {"records": COUNT, "mb_s": round(COUNT * len(RECORD) / MB / elapsed, 1)}


def transactional(cluster: Cluster) -> tuple[str, dict[str, Any]]:
    topic = create_topic(cluster)
    producer = Producer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "transactional.id": f"bench-{uuid.uuid4().hex[:6]}",
            **PRODUCER,
        }
    )
    producer.init_transactions(60)
    commits: list[float] = []
    began = time.perf_counter()
    producer.begin_transaction()

    def maybe_commit() -> None:
        nonlocal began
        if time.perf_counter() - began < COMMIT_EVERY_S:
            return
        producer.flush(120)
        started = time.perf_counter()
        producer.commit_transaction(120)
        commits.append(time.perf_counter() - started)
        began = time.perf_counter()
        producer.begin_transaction()

    elapsed = produce_all(producer, topic, maybe_commit)
    flushing = time.perf_counter()
    producer.flush(120)
    elapsed += time.perf_counter() - flushing
    started = time.perf_counter()
    producer.commit_transaction(120)
    commits.append(time.perf_counter() - started)
    elapsed += commits[-1]
    commits.sort()
    return topic, {
        "records": COUNT,
        "mb_s": round(COUNT * len(RECORD) / MB / elapsed, 1),
        "transactions": len(commits),
        "commit_p50_ms": round(statistics.median(commits) * 1000, 1),
        "commit_p99_ms": round(commits[min(len(commits) - 1, int(len(commits) * 0.99))] * 1000, 1),
    }


def consume(cluster: Cluster, topic: str, isolation: str) -> dict[str, Any]:
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": f"bench-{uuid.uuid4().hex[:6]}",
            "isolation.level": isolation,
            "enable.auto.commit": False,
            "fetch.max.bytes": 52428800,
        }
    )
    consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in range(3)])
    got = 0
    start = time.perf_counter()
    deadline = start + 300
    while got < COUNT and time.perf_counter() < deadline:
        got += sum(1 for m in consumer.consume(10_000, 1.0) if not m.error())
    elapsed = time.perf_counter() - start
    consumer.close()
    return {"records": got, "mb_s": round(got * len(RECORD) / MB / elapsed, 1)}


def main() -> None:
    describe_or_run("bench.transactions", __doc__)
    with bench_cluster(brokers=3, configs={"log.segment.bytes": "268435456"}) as cluster:
        plain = idempotent(cluster)
        topic, txn = transactional(cluster)
        committed = consume(cluster, topic, "read_committed")
        uncommitted = consume(cluster, topic, "read_uncommitted")
    record(
        "transactions",
        {
            "brokers": 3,
            "partitions": 3,
            "replication_factor": 3,
            "record_bytes": len(RECORD),
            "idempotent": plain,
            "transactional_commit_every_100ms": txn,
            "ratio": round(txn["mb_s"] / plain["mb_s"], 2),
            "read_committed": committed,
            "read_uncommitted": uncommitted,
            "targets": {"transactional_vs_idempotent": 0.5},
        },
    )


if __name__ == "__main__":
    main()
