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

import socket
import struct
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
from bench.requests import produce_frame
from kafkalite.protocol.codec import decode_response
from kafkalite.protocol.records import Record, build_batch
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


RAW_IN_FLIGHT = 16
"""The raw producer's requests in flight: enough that the broker always has the next one
read (1 MiB; it reads 128 KiB ahead), as ``PRODUCER`` has: librdkafka's default
``max.in.flight.requests.per.connection`` is 1,000,000 when not idempotent. With five, the
raw producer waited for each answer in turn and the broker for it (2026-11-30 02:18, load
1.4: 269-328 MB/s at five, 339-356 at twenty)."""
RAW_BATCH_RECORDS = 63
"""1 KiB records in the raw producer's one batch, uncompressed: as full as ``PRODUCER``'s
64 KiB batches get."""


def raw_produce(bootstrap: str, topic: str, count: int) -> float:
    """Seconds to produce ``count`` 1 KiB records as one batch resent (acks=1,
    ``RAW_IN_FLIGHT`` requests in flight) from a client that encodes nothing per request:
    what the broker absorbs when the client is not what limits the rate, as
    ``bench.consume``'s raw reader is for reads. Every answer is decoded and must carry no
    error."""
    now_ms = int(time.time() * 1000)
    batch = build_batch([Record(None, RECORD, now_ms) for _ in range(RAW_BATCH_RECORDS)])
    frame = produce_frame(topic, 0, 1, batch)
    host, port = bootstrap.split(",", maxsplit=1)[0].rsplit(":", 1)
    requests, sent, answered = count // RAW_BATCH_RECORDS, 0, 0
    with socket.create_connection((host, int(port))) as sock, sock.makefile("rb") as answers:
        start = time.perf_counter()
        while answered < requests:
            while sent < requests and sent - answered < RAW_IN_FLIGHT:
                sock.sendall(frame)
                sent += 1
            size = struct.unpack(">i", answers.read(4))[0]
            response = decode_response(0, 10, answers.read(size))
            error = response.responses[0].partition_responses[0].error_code
            if error:
                raise RuntimeError(f"raw produce refused: error {error}")
            answered += 1
        return time.perf_counter() - start


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
        t_raw = raw_produce(bootstrap, "bench-raw", n_confluent)
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
