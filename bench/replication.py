"""Replicated produce on three brokers: throughput and latency with acks=all vs acks=1,
and each broker's memory.

Topic with 3 partitions, RF=3, min.insync.replicas=2. confluent-kafka, idempotent,
1 KiB records, linger 5 ms, 1 MiB batches. Latency is produce() -> delivery report for
every record of the run (so it includes queueing in the client under full load).
CPU: the three brokers' and the producing client's (this process's) seconds per MB
produced, which say what limits the rate on a machine of two cores: the client's
librdkafka and Python take about as much as the three brokers together. Memory: each
broker's RSS when idle after the runs. Then the same acks=all from ``bench.raw_producer``
(a client that encodes nothing, not idempotent): what the brokers take. Run:
``.venv/bin/python -m bench.replication``.
"""

from __future__ import annotations

import statistics
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import psutil
from confluent_kafka import Producer

from bench.common import bench_cluster, cpu_seconds, describe_or_run, record
from bench.raw_producer import raw_produce
from kafkalite.cluster import Cluster
from tests.support.topics import create_topic as create
from tests.support.waiting import wait_for

RECORD = b"x" * 1024
COUNT = 150_000
MIB_BATCH_RECORDS = 1000
"""The raw producer's batch: about the 1 MiB the librdkafka producer's ``batch.size``
allows (under ``message.max.bytes``, 1,048,588)."""
MB = 1024 * 1024


def create_topic(cluster: Cluster) -> str:
    topic = f"rep-{uuid.uuid4().hex[:6]}"
    create(cluster.bootstrap_servers, topic, 3, 3, {"min.insync.replicas": "2"})

    def replicated() -> bool:
        rows = [p for p in cluster.status()["partitions"] if p["topic"] == topic]
        return len(rows) == 3 and all(len(p["isr"]) == 3 for p in rows)

    wait_for(replicated, 30, "topic replicated")
    return topic


def produce(cluster: Cluster, acks: str) -> dict[str, Any]:
    topic = create_topic(cluster)
    producer = Producer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "acks": acks,
            "enable.idempotence": acks == "all",
            "linger.ms": 5,
            "batch.size": 1048576,
            "queue.buffering.max.kbytes": 262144,
        }
    )
    latencies: list[float] = []
    errors = 0

    def delivered(error: Any, _message: Any, sent: float) -> None:
        nonlocal errors
        if error is not None:
            errors += 1
        latencies.append(time.perf_counter() - sent)

    pids = [cluster.pid(b.broker_id) for b in cluster.spec.brokers]
    brokers_cpu, client_cpu = sum(cpu_seconds(p) for p in pids), time.process_time()
    start = time.perf_counter()
    for _ in range(COUNT):
        sent = time.perf_counter()
        while True:
            try:
                producer.produce(topic, RECORD, on_delivery=partial(delivered, sent=sent))
                break
            except BufferError:
                producer.poll(0.001)
        producer.poll(0)
    producer.flush(120)
    elapsed = time.perf_counter() - start
    brokers_cpu = sum(cpu_seconds(p) for p in pids) - brokers_cpu
    client_cpu = time.process_time() - client_cpu
    produced_mb = COUNT * len(RECORD) / MB
    latencies.sort()
    return {
        "acks": acks,
        "records": COUNT,
        "mb_s": round(produced_mb / elapsed, 1),
        "brokers_cpu_ms_per_mb": round(brokers_cpu / produced_mb * 1000, 2),
        "client_cpu_ms_per_mb": round(client_cpu / produced_mb * 1000, 2),
        "p50_ms": round(statistics.median(latencies) * 1000, 1),
        "p99_ms": round(latencies[int(len(latencies) * 0.99)] * 1000, 1),
        "errors": errors,
    }


def raw_all(cluster: Cluster) -> dict[str, Any]:
    """acks=all from ``bench.raw_producer``: one connection to each partition's leader,
    each sending its share of ``COUNT`` records in batches of ``MIB_BATCH_RECORDS``, on
    threads of this process (they wait in socket calls, outside the GIL). What the three
    brokers take when the client is not what limits the rate."""
    topic = create_topic(cluster)
    leaders = {
        p["partition"]: p["leader"] for p in cluster.status()["partitions"] if p["topic"] == topic
    }
    share = COUNT // len(leaders) // MIB_BATCH_RECORDS * MIB_BATCH_RECORDS  # whole batches
    pids = [cluster.pid(b.broker_id) for b in cluster.spec.brokers]
    brokers_cpu = sum(cpu_seconds(p) for p in pids)
    with ThreadPoolExecutor(len(leaders)) as pool:
        start = time.perf_counter()
        runs = [
            pool.submit(
                raw_produce,
                cluster.spec.broker(leader).address,
                topic,
                share,
                partition,
                -1,
                MIB_BATCH_RECORDS,
            )
            for partition, leader in leaders.items()
        ]
        for run in runs:
            run.result()
        elapsed = time.perf_counter() - start
    brokers_cpu = sum(cpu_seconds(p) for p in pids) - brokers_cpu
    produced_mb = share * len(leaders) * len(RECORD) / MB
    return {
        "mb_s": round(produced_mb / elapsed, 1),
        "brokers_cpu_ms_per_mb": round(brokers_cpu / produced_mb * 1000, 2),
    }


def main() -> None:
    describe_or_run("bench.replication", __doc__)
    with bench_cluster(brokers=3, configs={"log.segment.bytes": "268435456"}) as cluster:
        all_acks = produce(cluster, "all")
        one_ack = produce(cluster, "1")
        raw = raw_all(cluster)
        time.sleep(2)
        rss = {
            b.broker_id: round(psutil.Process(cluster.pid(b.broker_id)).memory_info().rss / MB, 1)
            for b in cluster.spec.brokers
        }
    record(
        "replication",
        {
            "brokers": 3,
            "partitions": 3,
            "replication_factor": 3,
            "record_bytes": len(RECORD),
            "acks_all": all_acks,
            "acks_1": one_ack,
            "raw_acks_all": raw,
            "broker_rss_mb": rss,
            "targets": {"acks_all_mb_s": 60, "rss_mb": 80},
        },
    )


if __name__ == "__main__":
    main()
