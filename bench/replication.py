"""Replicated produce on three brokers: throughput and latency with acks=all vs acks=1,
and each broker's memory.

Topic with 3 partitions, RF=3, min.insync.replicas=2. confluent-kafka, 1 KiB records,
linger 5 ms, 1 MiB batches: acks=all idempotent (the producer's default since Kafka
3.0), acks=all not idempotent, acks=1. Each producer is started (its producer id and
metadata in hand) before its run is timed. Latency is produce() -> delivery report for
every record of the run (so it includes queueing in the client under full load).
CPU: the three brokers' and the producing client's (this process's) seconds per MB
produced, which say what limits the rate on a machine of two cores. librdkafka's
idempotent producer keeps one Produce in flight per partition (its in-flight limit of
five counts messages, not requests: confluentinc/librdkafka#4989), and it costs the
client about twice the CPU per MB of the same producer without idempotence (its broker
thread 68 % of a core against 22 % for a 100 MB flush to one partition, 2026-11-30).
Memory: each broker's RSS idle after the acks=all run. Then the same acks=all from
``bench.raw_producer`` (a client that encodes nothing, not idempotent): what the brokers
take. Each case runs on a new cluster. Run: ``.venv/bin/python -m bench.replication``;
with ``--baseline COMMIT``, the acks=all runs on a cluster of that commit and one of
this tree, side by side.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import psutil
from confluent_kafka import Producer

from bench.baseline import cluster_of, current_commit, short_commit, worktree
from bench.common import bench_cluster, cpu_seconds, record
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


def produce(cluster: Cluster, acks: str, idempotent: bool) -> dict[str, Any]:
    topic = create_topic(cluster)
    producer = Producer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "acks": acks,
            "enable.idempotence": idempotent,
            "linger.ms": 5,
            "batch.size": 1048576,
            "queue.buffering.max.kbytes": 262144,
        }
    )
    # librdkafka's idempotent producer finds no broker up when it starts, and asks for its
    # producer id when its PID timer fires again, 0.5 s later (2.16, debug=eos): a third
    # of an acks=all run, so a rate measured over it was the client's start-up.
    producer.produce(topic, b"warm-up")
    producer.flush(30)
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
        "idempotent": idempotent,
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


CONFIGS = {"log.segment.bytes": "268435456"}
CASES: dict[str, Callable[[Cluster], dict[str, Any]]] = {
    "acks_all": partial(produce, acks="all", idempotent=True),
    "acks_all_not_idempotent": partial(produce, acks="all", idempotent=False),
    "acks_1": partial(produce, acks="1", idempotent=False),
    "raw_acks_all": raw_all,
}
"""Each on a cluster of its own: on this machine a written MB costs more once a run has
filled the page cache with more than the guest's recently used memory (its host faults
the rest in: docs/benchmarks.md), so a case run after others on one cluster paid more."""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m bench.replication",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--baseline",
        metavar="COMMIT",
        help="instead, acks=all on a cluster of COMMIT (a git worktree) and one of this tree",
    )
    args = parser.parse_args(argv)
    if args.baseline:
        compare(short_commit(args.baseline))
        return
    results: dict[str, Any] = {}
    for name, case in CASES.items():
        with bench_cluster(brokers=3, configs=CONFIGS) as cluster:
            results[name] = case(cluster)
            if name == "acks_all":
                time.sleep(2)
                results["broker_rss_mb"] = {
                    b.broker_id: round(
                        psutil.Process(cluster.pid(b.broker_id)).memory_info().rss / MB, 1
                    )
                    for b in cluster.spec.brokers
                }
    record(
        "replication",
        {
            "brokers": 3,
            "partitions": 3,
            "replication_factor": 3,
            "record_bytes": len(RECORD),
            **results,
            "targets": {"acks_all_mb_s": 60, "rss_mb": 80},
        },
    )


def compare(commit: str) -> None:
    """The acks=all cases on clusters of ``commit`` and of this tree, in the order A B B A
    (a drift in the machine's load hits both)."""
    names = (f"baseline {commit}", f"current {current_commit()}")
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    with worktree(commit) as tree:
        for i in (0, 1, 1, 0):
            run = {}
            for name in ("acks_all", "acks_all_not_idempotent", "raw_acks_all"):
                with (
                    cluster_of(tree, 3, CONFIGS)
                    if i == 0
                    else bench_cluster(brokers=3, configs=CONFIGS)
                ) as cluster:
                    run[name] = CASES[name](cluster)
            print(names[i], json.dumps(run), flush=True)
            runs[names[i]].append(run)
    record("replication_baseline", {"brokers": 3, "record_bytes": len(RECORD), "runs": runs})


if __name__ == "__main__":
    main()
