"""Idempotent producers: a retried batch is stored once, with its original offset.

The retry is real: a proxy drops the broker's produce response after the append, the
client (kafka-python, then librdkafka) reconnects and resends the same batch with the same
producer id, epoch and sequence, and the broker must recognise it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from confluent_kafka import Producer
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from kafkalite.cluster import Cluster
from tests.support.ports import free_base_port
from tests.support.proxy import LossyProxy
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.interop, pytest.mark.slow]


@pytest.fixture
def proxied(tmp_path: Path) -> Iterator[tuple[Cluster, LossyProxy]]:
    base = free_base_port()
    proxy = LossyProxy(("127.0.0.1", base), drop_produce_responses=0)
    cluster = Cluster.up(
        tmp_path / "c",
        brokers=1,
        base_port=base,
        configs={"advertised.listeners": f"PLAINTEXT://127.0.0.1:{proxy.port}"},
    )
    try:
        yield cluster, proxy
    finally:
        cluster.down()
        proxy.close()


def _values(bootstrap: str, topic: str) -> list[bytes]:
    """Every record in the partition, read up to its end offset (asked first, after the
    producer closed): a duplicate, if stored, is in there, not merely not seen yet."""
    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False
    )
    tp = TopicPartition(topic, 0)
    consumer.assign([tp])
    end = consumer.end_offsets([tp])[tp]
    out: list[bytes] = []

    def read_to_end() -> bool:
        for records in consumer.poll(timeout_ms=300).values():
            out.extend(r.value for r in records)
        return consumer.position(tp) >= end

    try:
        wait_for(read_to_end, 20, f"{topic} read to its end offset {end}")
    finally:
        consumer.close()
    return out


def test_kafka_python_retry_after_lost_ack_is_deduplicated(
    proxied: tuple[Cluster, LossyProxy],
) -> None:
    cluster, proxy = proxied
    bootstrap = f"127.0.0.1:{proxy.port}"
    producer = KafkaProducer(
        bootstrap_servers=bootstrap,
        enable_idempotence=True,
        acks="all",
        max_in_flight_requests_per_connection=1,
    )
    producer.send("dedup", b"warm-up").get(timeout=20)
    proxy.remaining_drops = 1
    metadata = producer.send("dedup", b"once").get(timeout=30)
    producer.close()
    assert proxy.dropped == 1, "the fault was never injected"
    assert metadata.offset == 1
    assert _values(bootstrap, "dedup") == [b"warm-up", b"once"]
    events = cluster.events()
    assert any(e["type"] == "duplicate_suppressed" for e in events)


def test_confluent_retry_after_lost_ack_is_deduplicated(
    proxied: tuple[Cluster, LossyProxy],
) -> None:
    _, proxy = proxied
    bootstrap = f"127.0.0.1:{proxy.port}"
    producer = Producer(
        {"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 0}
    )
    results: list = []
    producer.produce("dedup2", b"first", on_delivery=lambda e, m: results.append((e, m.offset())))
    producer.flush(20)
    proxy.remaining_drops = 1
    producer.produce("dedup2", b"second", on_delivery=lambda e, m: results.append((e, m.offset())))
    producer.flush(30)
    assert proxy.dropped == 1
    assert results == [(None, 0), (None, 1)]
    assert _values(bootstrap, "dedup2") == [b"first", b"second"]
