"""confluent-kafka (librdkafka), aiokafka and kcat against a real Kafka-Lite broker."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import time

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka import TopicPartition as ATP
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
)

pytestmark = pytest.mark.interop


def _confluent_consume(
    bootstrap: str, topic: str, expected: int, timeout_s: float = 20, **config: object
) -> list:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": f"g-{topic}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            **config,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    out = []
    deadline = time.monotonic() + timeout_s
    while len(out) < expected and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is None:
            continue
        if msg.error():
            raise KafkaException(msg.error())
        out.append(msg)
    consumer.close()
    return out


@pytest.mark.parametrize("compression", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_confluent_produce_consume(bootstrap: str, topic: str, compression: str) -> None:
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "enable.idempotence": True,
            "compression.type": compression,
            "linger.ms": 5,
        }
    )
    delivered: list = []
    for i in range(200):
        producer.produce(
            topic,
            key=b"k%d" % i,
            value=b"value-%d" % i,
            on_delivery=lambda err, msg: delivered.append((err, msg.offset())),
        )
    assert producer.flush(20) == 0
    assert all(err is None for err, _ in delivered)
    assert sorted(o for _, o in delivered) == list(range(200))
    # librdkafka's default isolation.level is read_committed: Fetch must carry the LSO.
    messages = _confluent_consume(bootstrap, topic, 200)
    assert [m.value() for m in messages] == [b"value-%d" % i for i in range(200)]
    assert [m.offset() for m in messages] == list(range(200))


def test_confluent_watermarks_and_offsets_for_times(bootstrap: str, topic: str) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(10):
        producer.produce(topic, value=b"x", timestamp=1_000_000 + i * 10)
    producer.flush(20)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "wm"})
    assert consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10) == (0, 10)
    found = consumer.offsets_for_times([TopicPartition(topic, 0, 1_000_035)], timeout=10)
    assert found[0].offset == 4
    consumer.close()


def test_confluent_admin_configs(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 2, 1, config={"retention.ms": "60000"})])[topic].result(10)
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    configs = admin.describe_configs([resource])[resource].result(10)
    assert configs["retention.ms"].value == "60000"
    assert configs["min.insync.replicas"].value == "1"
    assert configs["min.insync.replicas"].is_default
    change = ConfigResource(
        ConfigResource.Type.TOPIC,
        topic,
        incremental_configs=[
            ConfigEntry("min.insync.replicas", "2", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    admin.incremental_alter_configs([change])[change].result(10)
    configs = admin.describe_configs([resource])[resource].result(10)
    assert configs["min.insync.replicas"].value == "2"
    invalid = ConfigResource(
        ConfigResource.Type.TOPIC,
        topic,
        incremental_configs=[
            ConfigEntry("min.insync.replicas", "-3", incremental_operation=AlterConfigOpType.SET)
        ],
    )
    with pytest.raises(KafkaException, match=r"min\.insync\.replicas"):
        admin.incremental_alter_configs([invalid])[invalid].result(10)
    broker = ConfigResource(ConfigResource.Type.BROKER, "1")
    broker_configs = admin.describe_configs([broker])[broker].result(10)
    assert broker_configs["auto.create.topics.enable"].value == "true"
    cluster = admin.describe_cluster(request_timeout=10).result(10)
    assert [n.id for n in cluster.nodes] == [1]
    assert cluster.controller.id == 1


def test_min_insync_replicas_above_isr_rejects_acks_all(bootstrap: str, topic: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1, config={"min.insync.replicas": "2"})])[topic].result(
        10
    )
    errors: list = []
    producer = Producer(
        {"bootstrap.servers": bootstrap, "acks": "all", "message.timeout.ms": 3000, "retries": 0}
    )
    producer.produce(topic, b"x", on_delivery=lambda err, msg: errors.append(err))
    producer.flush(10)
    assert errors and errors[0] is not None
    assert errors[0].name() == "NOT_ENOUGH_REPLICAS"
    # acks=1 does not care about min.insync.replicas
    ok: list = []
    producer = Producer({"bootstrap.servers": bootstrap, "acks": 1})
    producer.produce(topic, b"y", on_delivery=lambda err, msg: ok.append(err))
    producer.flush(10)
    assert ok == [None]


def test_aiokafka_round_trip(bootstrap: str, topic: str) -> None:

    async def run() -> list[bytes]:
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap)
        await producer.start()
        try:
            for i in range(50):
                await producer.send_and_wait(topic, b"a%d" % i)
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap, auto_offset_reset="earliest", enable_auto_commit=False
        )
        await consumer.start()
        try:
            consumer.assign([ATP(topic, 0)])
            await consumer.seek_to_beginning()
            values: list[bytes] = []
            deadline = time.monotonic() + 20
            while len(values) < 50 and time.monotonic() < deadline:
                batches = await consumer.getmany(timeout_ms=500)
                for records in batches.values():
                    values.extend(r.value for r in records)
            return values
        finally:
            await consumer.stop()

    assert asyncio.run(run()) == [b"a%d" % i for i in range(50)]


@pytest.mark.skipif(
    shutil.which("kcat") is None,
    reason="kcat not installed (scripts/install-system-deps.sh installs it as root)",
)
def test_kcat_produce_consume_and_metadata(bootstrap: str, topic: str) -> None:
    lines = "\n".join(f"line-{i}" for i in range(30)) + "\n"
    subprocess.run(
        ["kcat", "-b", bootstrap, "-P", "-t", topic, "-p", "0"],
        input=lines.encode(),
        check=True,
        timeout=30,
    )
    out = subprocess.run(
        [
            "kcat",
            "-b",
            bootstrap,
            "-C",
            "-t",
            topic,
            "-p",
            "0",
            "-o",
            "beginning",
            "-e",
            "-f",
            "%o %s\n",
        ],
        check=True,
        timeout=30,
        capture_output=True,
    ).stdout.decode()
    assert out.splitlines() == [f"{i} line-{i}" for i in range(30)]
    meta = subprocess.run(
        ["kcat", "-b", bootstrap, "-L", "-t", topic], check=True, timeout=30, capture_output=True
    ).stdout.decode()
    assert "1 brokers:" in meta and f'topic "{topic}" with 1 partitions' in meta
