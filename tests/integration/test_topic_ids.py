"""Fetch by topic id (v13+, KIP-516), as librdkafka 2.x and kafka-python fetch: a topic's
records come back under its id, and an id the broker does not know (the topic was deleted,
or recreated under a new id) is UNKNOWN_TOPIC_ID, which makes a client refresh metadata."""

from __future__ import annotations

import datetime
import logging
import uuid

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as CTP
from kio.schema.fetch.v16 import request as fetch_req
from kio.schema.metadata.v12.request import MetadataRequest, MetadataRequestTopic

from kafkalite.protocol.errors import ErrorCode
from kafkalite.protocol.records import decode_records
from tests.support.raw import RawConnection
from tests.support.topics import create_topic

pytestmark = pytest.mark.interop


def _fetch_by_id(topic_id: uuid.UUID) -> fetch_req.FetchRequest:
    return fetch_req.FetchRequest(
        max_wait=datetime.timedelta(0),
        min_bytes=1,
        topics=(
            fetch_req.FetchTopic(
                topic_id=topic_id,
                partitions=(
                    fetch_req.FetchPartition(
                        partition=0, fetch_offset=0, partition_max_bytes=1 << 20
                    ),
                ),
            ),
        ),
        forgotten_topics_data=(),
    )


def test_fetch_by_topic_id_and_an_unknown_id(bootstrap: str, topic: str) -> None:
    create_topic(bootstrap, topic, 1, 1)
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(3):
        producer.produce(topic, b"by-id %d" % i)
    assert producer.flush(10) == 0
    with RawConnection(bootstrap) as conn:
        described = conn.request(
            MetadataRequest(
                topics=(MetadataRequestTopic(topic_id=None, name=topic),),
                allow_auto_topic_creation=False,
                include_topic_authorized_operations=False,
            )
        )
        topic_id = described.topics[0].topic_id
        (known,) = conn.request(_fetch_by_id(topic_id)).responses
        (missing,) = conn.request(_fetch_by_id(uuid.uuid4())).responses
    assert known.topic_id == topic_id
    assert [r.value for r in decode_records(known.partitions[0].records)] == [
        b"by-id %d" % i for i in range(3)
    ]
    assert missing.partitions[0].error_code == ErrorCode.unknown_topic_id
    assert missing.partitions[0].records == b""


def test_metadata_by_topic_id(bootstrap: str, topic: str) -> None:
    """Metadata v12+ looks topics up by id, as Kafka does (a KIP-848 consumer is given its
    partitions by topic id and asks so for their names and leaders); an unknown id is
    UNKNOWN_TOPIC_ID, and nothing is created."""
    create_topic(bootstrap, topic, 2, 1)
    unknown = uuid.uuid4()
    with RawConnection(bootstrap) as conn:

        def metadata(*topics: MetadataRequestTopic) -> tuple:
            return conn.request(
                MetadataRequest(
                    topics=topics,
                    allow_auto_topic_creation=True,
                    include_topic_authorized_operations=False,
                )
            ).topics

        (by_name,) = metadata(MetadataRequestTopic(topic_id=None, name=topic))
        known, missing = metadata(
            MetadataRequestTopic(topic_id=by_name.topic_id, name=None),
            MetadataRequestTopic(topic_id=unknown, name=None),
        )
    assert (known.name, known.topic_id, len(known.partitions)) == (topic, by_name.topic_id, 2)
    assert (missing.error_code, missing.name, missing.topic_id) == (
        ErrorCode.unknown_topic_id,
        None,
        unknown,
    )


def test_librdkafka_fetches_by_topic_id(bootstrap: str, topic: str) -> None:
    create_topic(bootstrap, topic, 1, 1)
    producer = Producer({"bootstrap.servers": bootstrap})
    producer.produce(topic, b"read through a topic id")
    assert producer.flush(10) == 0
    sent: list[str] = []
    log = logging.getLogger(f"librdkafka-{topic}")
    log.addHandler(Collect(sent))
    log.setLevel(logging.DEBUG)
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": topic, "debug": "protocol"}, logger=log
    )
    consumer.assign([CTP(topic, 0, 0)])
    try:
        (message,) = consumer.consume(1, timeout=20)
        consumer.poll(0)  # serve the log queue
    finally:
        consumer.close()
    assert message.value() == b"read through a topic id"
    versions = {int(m.split("(v")[1].split(",")[0]) for m in sent if "Sent FetchRequest" in m}
    assert versions and min(versions) >= 13


class Collect(logging.Handler):
    def __init__(self, into: list[str]) -> None:
        super().__init__()
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record.getMessage())
