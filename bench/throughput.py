"""Produce and consume throughput with 1 KiB records, one broker, one partition.

confluent-kafka: 64 KiB batches, linger 5 ms, acks=1 (the issue's configuration);
kafka-python: its defaults with acks=1. The confluent-kafka produce run also reports the
broker's and the client's (this process's) CPU per MB, and the same records are produced
again by a raw client that resends one pre-encoded request (``raw_produce``): the rate
the broker itself allows, on a machine where librdkafka's CPU is half of what a produced
MB costs. Consume throughput is read back with
confluent-kafka: one read of the 200,000 records (195 MB) just written, timed from the
first ``consume()``, so the consumer's first fetch round trips are inside a 0.2-0.4 s
measurement. What one broker serves to consumers over a larger volume, and whose CPU
that rate is made of, is ``bench.consume``'s. Run: ``.venv/bin/python -m bench.throughput``.
"""

from __future__ import annotations

import time

from confluent_kafka import Consumer, Producer, TopicPartition
from kafka import KafkaProducer

from bench.common import (
    bench_cluster,
    broker_rss_mb,
    cpu_seconds,
    describe_or_run,
    produce_all,
    record,
)
from bench.raw_producer import raw_produce
from tests.support.topics import create_topic

RECORD = b"x" * 1024
MB = 1024 * 1024


PRODUCER = {
    "acks": 1,
    "linger.ms": 5,
    "batch.size": 65536,
    "queue.buffering.max.kbytes": 262144,
    "enable.idempotence": False,
}
"""The confluent-kafka producer of these figures (and of the data ``bench.consume`` reads)."""


def confluent_produce(bootstrap: str, topic: str, count: int) -> float:
    producer = Producer({"bootstrap.servers": bootstrap, **PRODUCER})
    start = time.perf_counter()
    produce_all(producer, topic, RECORD, count)
    producer.flush(120)
    return time.perf_counter() - start


def kafka_python_produce(bootstrap: str, topic: str, count: int) -> float:
    producer = KafkaProducer(
        bootstrap_servers=bootstrap, acks=1, enable_idempotence=False, linger_ms=5, batch_size=65536
    )
    start = time.perf_counter()
    for _ in range(count):
        producer.send(topic, RECORD, partition=0)
    producer.flush(120)
    elapsed = time.perf_counter() - start
    producer.close()
    return elapsed


def confluent_consume(bootstrap: str, topic: str, count: int) -> float:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "bench",
            "enable.auto.commit": False,
            "fetch.max.bytes": 52428800,
            "max.partition.fetch.bytes": 10485760,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    seen = 0
    start = time.perf_counter()
    while seen < count:
        seen += len(consumer.consume(10000, timeout=1))
    elapsed = time.perf_counter() - start
    consumer.close()
    return elapsed


def main() -> None:
    describe_or_run("bench.throughput", __doc__)
    n_confluent, n_python = 200_000, 50_000
    with bench_cluster(configs={"log.segment.bytes": "268435456"}) as cluster:
        bootstrap = cluster.bootstrap_servers
        idle_rss = broker_rss_mb(cluster)
        broker_cpu, client_cpu = cpu_seconds(cluster.pid(1)), time.process_time()
        t_produce = confluent_produce(bootstrap, "bench-c", n_confluent)
        broker_cpu = cpu_seconds(cluster.pid(1)) - broker_cpu
        client_cpu = time.process_time() - client_cpu
        t_consume = confluent_consume(bootstrap, "bench-c", n_confluent)
        create_topic(bootstrap, "bench-raw", 1, 1)
        raw_cpu = cpu_seconds(cluster.pid(1))
        t_raw = raw_produce(bootstrap.split(",")[0], "bench-raw", n_confluent)
        raw_cpu = cpu_seconds(cluster.pid(1)) - raw_cpu
        t_python = kafka_python_produce(bootstrap, "bench-p", n_python)
        loaded_rss = broker_rss_mb(cluster)
    produced_mb = n_confluent * len(RECORD) / MB
    record(
        "throughput",
        {
            "record_bytes": len(RECORD),
            "confluent_produce_mb_s": round(produced_mb / t_produce, 1),
            # on two cores the client's CPU is half of what a produced MB costs
            "produce_broker_cpu_ms_per_mb": round(broker_cpu / produced_mb * 1000, 2),
            "produce_client_cpu_ms_per_mb": round(client_cpu / produced_mb * 1000, 2),
            "confluent_consume_mb_s": round(produced_mb / t_consume, 1),
            # the same records from a client that encodes nothing: the broker's own rate
            "raw_produce_mb_s": round(produced_mb / t_raw, 1),
            "raw_produce_broker_cpu_ms_per_mb": round(raw_cpu / produced_mb * 1000, 2),
            "kafka_python_produce_mb_s": round(n_python * len(RECORD) / MB / t_python, 1),
            "broker_rss_idle_mb": round(idle_rss, 1),
            "broker_rss_after_mb": round(loaded_rss, 1),
        },
    )


if __name__ == "__main__":
    main()
