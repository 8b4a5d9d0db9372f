"""One round of everything a student's tutorial code does, with every client and version.

kafka-python pinned with ``api_version`` does not ask the broker what it speaks: it uses
its own table of that Kafka release's versions (``(4, 0, 0)`` sends CreateTopics v7,
FindCoordinator v6, OffsetFetch v8...). A broker that does not speak one of them closes
the connection and the student's code fails at topic creation or at the first group
consumer. So the same round runs with kafka-python pinned to Kafka 2.7, 3.0, 3.7 and 4.0
and left on auto (ApiVersions), then with confluent-kafka (librdkafka) and aiokafka:
create a topic, produce idempotently with acks=all, consume in a group and commit, run a
transaction that commits the group's offsets (``send_offsets_to_transaction``), describe
and alter the topic's configs, delete the topic. Each step checks what it did.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka import TopicPartition as ATP
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin import NewTopic as ANewTopic
from aiokafka.admin.config_resource import ConfigResource as AConfigResource
from aiokafka.admin.config_resource import ConfigResourceType as AConfigResourceType
from aiokafka.structs import OffsetAndMetadata as AOffsetAndMetadata
from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
)
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, OffsetAndMetadata
from kafka import TopicPartition as KTP
from kafka.admin import ConfigResource as KConfigResource
from kafka.admin import ConfigResourceType
from kafka.admin import NewTopic as KNewTopic

from tests.support.waiting import wait_for

pytestmark = [pytest.mark.interop, pytest.mark.slow]

RECORDS = 10
PARTITIONS = 2
RETENTION_MS = "3600000"


def _names() -> tuple[str, str, str]:
    suffix = uuid.uuid4().hex[:8]
    return f"round-{suffix}", f"round-group-{suffix}", f"round-txn-{suffix}"


def _until(condition: Callable[[], Any], what: str, timeout_s: float = 30) -> Any:
    return wait_for(condition, timeout_s=timeout_s, what=what)


# ---- kafka-python, pinned and on auto ------------------------------------------------


@pytest.mark.parametrize("api_version", [(2, 7), (3, 0), (3, 7), (4, 0, 0), None], ids=str)
def test_kafka_python_round(bootstrap: str, api_version: tuple[int, ...] | None) -> None:
    pin: dict[str, Any] = {} if api_version is None else {"api_version": api_version}
    topic, group, txn_id = _names()
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, **pin)
    try:
        admin.create_topics([KNewTopic(topic, PARTITIONS, 1)])
        _until(lambda: topic in admin.list_topics(), f"{topic} created")

        producer = KafkaProducer(
            bootstrap_servers=bootstrap, acks="all", enable_idempotence=True, **pin
        )
        sent = [
            producer.send(topic, key=b"k%d" % i, value=b"v%d" % i, partition=i % PARTITIONS)
            for i in range(RECORDS)
        ]
        offsets = [f.get(timeout=30) for f in sent]
        producer.close()
        assert sorted(m.offset for m in offsets) == sorted(
            [i // PARTITIONS for i in range(RECORDS)]
        )

        consumer = KafkaConsumer(
            topic,
            bootstrap_servers=bootstrap,
            group_id=group,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            **pin,
        )
        seen: list[bytes] = []
        deadline = time.monotonic() + 30
        while len(seen) < RECORDS and time.monotonic() < deadline:
            for batch in consumer.poll(timeout_ms=500).values():
                seen.extend(r.value for r in batch)
        consumer.commit()
        consumer.close()
        assert sorted(seen) == sorted(b"v%d" % i for i in range(RECORDS))
        per_partition = RECORDS // PARTITIONS
        committed = admin.list_group_offsets({group: None})[group]
        assert {tp.partition: o.offset for tp, o in committed.items()} == {
            p: per_partition for p in range(PARTITIONS)
        }

        txn = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id, **pin)
        txn.init_transactions()
        txn.begin_transaction()
        txn.send(topic, value=b"in-txn", partition=0)
        txn.send_offsets_to_transaction(
            {KTP(topic, 0): OffsetAndMetadata(per_partition + 1, "", -1)}, group
        )
        txn.commit_transaction()
        txn.close()
        # EndTxn returns once the commit is decided; the offsets count once the coordinator
        # has written its marker to __consumer_offsets (as in Kafka): wait for it
        _until(
            lambda: (
                admin.list_group_offsets({group: None})[group][KTP(topic, 0)].offset
                == per_partition + 1
            ),
            "the transaction's offsets counted",
        )

        resource = KConfigResource(
            ConfigResourceType.TOPIC, topic, configs={"retention.ms": RETENTION_MS}
        )
        admin.alter_configs([resource])
        described = admin.describe_configs([KConfigResource(ConfigResourceType.TOPIC, topic)])
        assert described["topic"][topic]["retention.ms"]["value"] == RETENTION_MS

        admin.delete_topics([topic])
        _until(lambda: topic not in admin.list_topics(), f"{topic} deleted")
    finally:
        admin.close()


# ---- confluent-kafka (librdkafka) ---------------------------------------------------


def test_confluent_kafka_round(bootstrap: str) -> None:
    topic, group, txn_id = _names()
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, PARTITIONS, 1)])[topic].result(30)

    producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "enable.idempotence": True})
    for i in range(RECORDS):
        producer.produce(topic, b"v%d" % i, key=b"k%d" % i, partition=i % PARTITIONS)
    assert producer.flush(30) == 0

    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    seen: list[bytes] = []
    deadline = time.monotonic() + 30
    while len(seen) < RECORDS and time.monotonic() < deadline:
        msg = consumer.poll(0.5)
        if msg is None:
            continue
        if msg.error():
            raise KafkaException(msg.error())
        seen.append(msg.value())
    consumer.commit(asynchronous=False)
    per_partition = RECORDS // PARTITIONS
    committed = consumer.committed([TopicPartition(topic, p) for p in range(PARTITIONS)], 30)
    assert [tp.offset for tp in committed] == [per_partition] * PARTITIONS
    assert sorted(seen) == sorted(b"v%d" % i for i in range(RECORDS))

    txn = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id})
    txn.init_transactions(30)
    txn.begin_transaction()
    txn.produce(topic, b"in-txn", partition=0)
    txn.send_offsets_to_transaction(
        [TopicPartition(topic, 0, per_partition + 1)], consumer.consumer_group_metadata(), 30
    )
    txn.commit_transaction(30)
    committed = consumer.committed([TopicPartition(topic, 0)], 30)
    assert committed[0].offset == per_partition + 1
    consumer.close()

    resource = ConfigResource(
        "topic",
        topic,
        incremental_configs=[
            ConfigEntry("retention.ms", RETENTION_MS, incremental_operation=AlterConfigOpType.SET)
        ],
    )
    admin.incremental_alter_configs([resource])[resource].result(30)
    described = admin.describe_configs([ConfigResource("topic", topic)])
    entries = next(iter(described.values())).result(30)
    assert entries["retention.ms"].value == RETENTION_MS

    admin.delete_topics([topic])[topic].result(30)
    _until(lambda: topic not in admin.list_topics(timeout=10).topics, f"{topic} deleted")


# ---- aiokafka -----------------------------------------------------------------------


def test_aiokafka_round(bootstrap: str) -> None:
    asyncio.run(_aiokafka_round(bootstrap))


async def _aiokafka_round(bootstrap: str) -> None:
    topic, group, txn_id = _names()
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([ANewTopic(topic, PARTITIONS, 1)])
        for _ in range(60):
            if topic in await admin.list_topics():
                break
            await asyncio.sleep(0.5)

        producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap, acks="all", enable_idempotence=True
        )
        await producer.start()
        try:
            for i in range(RECORDS):
                await producer.send_and_wait(topic, b"v%d" % i, partition=i % PARTITIONS)
        finally:
            await producer.stop()

        consumer = AIOKafkaConsumer(
            topic,
            bootstrap_servers=bootstrap,
            group_id=group,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
        )
        await consumer.start()
        try:
            seen: list[bytes] = []
            deadline = time.monotonic() + 30
            while len(seen) < RECORDS and time.monotonic() < deadline:
                for batch in (await consumer.getmany(timeout_ms=500)).values():
                    seen.extend(r.value for r in batch)
            await consumer.commit()
            per_partition = RECORDS // PARTITIONS
            for p in range(PARTITIONS):
                assert await consumer.committed(ATP(topic, p)) == per_partition
        finally:
            await consumer.stop()
        assert sorted(seen) == sorted(b"v%d" % i for i in range(RECORDS))

        txn = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id)
        await txn.start()
        try:
            async with txn.transaction():
                await txn.send_and_wait(topic, b"in-txn", partition=0)
                await txn.send_offsets_to_transaction(
                    {ATP(topic, 0): AOffsetAndMetadata(per_partition + 1, "")}, group
                )
        finally:
            await txn.stop()
        # the offsets count once the commit marker is written (after EndTxn returns)
        for _ in range(60):
            offsets = await admin.list_consumer_group_offsets(group)
            if offsets[ATP(topic, 0)].offset == per_partition + 1:
                break
            await asyncio.sleep(0.5)
        assert offsets[ATP(topic, 0)].offset == per_partition + 1

        # aiokafka's admin client has AlterConfigs only (not the incremental API)
        await admin.alter_configs(
            [AConfigResource(AConfigResourceType.TOPIC, topic, {"retention.ms": RETENTION_MS})]
        )
        described = await admin.describe_configs(
            [AConfigResource(AConfigResourceType.TOPIC, topic)]
        )
        values = {
            entry[0]: entry[1]
            for response in described
            for r in response.resources
            for entry in r[4]
        }
        assert values["retention.ms"] == RETENTION_MS

        await admin.delete_topics([topic])
        for _ in range(60):
            if topic not in await admin.list_topics():
                break
            await asyncio.sleep(0.5)
        assert topic not in await admin.list_topics()
    finally:
        await admin.close()
