"""Who may Produce to an internal topic: Kafka's ``__admin_client`` only.

Kafka's broker refuses a client's write to ``__consumer_offsets`` / ``__transaction_state``
with INVALID_TOPIC_EXCEPTION unless the request's client id is ``__admin_client``
(``KafkaApis``: ``internalTopicsAllowed``). Kafka-Lite refused it for every client id,
so the coordinator-loading test, which writes 120,000 transactions' records under that
id, wrote nothing (librdkafka's flush counts a failed delivery as done) and then waited
180 s for replicas to hold them (CI, heavy group).
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from kio.schema.produce.v9.request import (
    PartitionProduceData,
    ProduceRequest,
    TopicProduceData,
)

from kafkalite.broker.context import RequestContext
from kafkalite.broker.data_plane.handlers.produce import ProduceApi
from kafkalite.broker.data_plane.replica_manager import ReplicaManager
from kafkalite.broker.data_plane.transaction_verification import TransactionVerifier
from kafkalite.broker.events import EventLog
from kafkalite.metadata.image import MetadataImage
from kafkalite.metadata.records import PartitionRecord, TopicRecord
from kafkalite.protocol.codec import decode_request, decode_response, encode_request
from kafkalite.protocol.errors import ErrorCode
from kafkalite.protocol.records import Record, build_batch
from kafkalite.storage.config import LogConfig
from kafkalite.storage.log_manager import LogManager

pytestmark = pytest.mark.unit

TOPIC = "__transaction_state"
PRODUCE = 0


def leader_of_internal_partition(tmp_path: Path) -> ReplicaManager:
    image = MetadataImage()
    for offset, record in enumerate(
        [TopicRecord(TOPIC, "id-ts"), PartitionRecord("id-ts", 0, (1,), (1,), 1, 0, 0)]
    ):
        image.replay(record, offset)
    manager = ReplicaManager(
        1, LogManager(tmp_path, LogConfig(), lambda: 0), image, EventLog(1, lambda: 0), lambda: 0
    )
    manager.apply_partition(TOPIC, 0, image.partition(TOPIC, 0))  # type: ignore[arg-type]
    return manager


async def produce_as(manager: ReplicaManager, client_id: str) -> int:
    """One acks=1 Produce of one record to partition 0, as a client with ``client_id``
    sends it (encoded and decoded, so the handler sees the real header); its error code."""
    body = ProduceRequest(
        transactional_id=None,
        acks=1,
        timeout=datetime.timedelta(seconds=5),
        topic_data=(
            TopicProduceData(
                name=TOPIC,
                partition_data=(
                    PartitionProduceData(index=0, records=build_batch([Record(b"k", b"v", 0)])),
                ),
            ),
        ),
    )
    request = decode_request(encode_request(body, 1, client_id)[4:])
    # a Produce without a transactional id: nothing to verify with a coordinator
    verifier = TransactionVerifier(1, manager.image, None, None, None, lambda: True)  # type: ignore[arg-type]
    api = ProduceApi(manager, manager.image, verifier)
    response = await api.produce(RequestContext(request, "test"), request.body)
    frame = b"".join(bytes(part) for part in response.parts)  # type: ignore[arg-type]
    body = decode_response(PRODUCE, request.api_version, frame[4:])  # as the client reads it
    return int(body.responses[0].partition_responses[0].error_code)


@pytest.mark.asyncio
async def test_a_client_cannot_write_an_internal_topic(tmp_path: Path) -> None:
    manager = leader_of_internal_partition(tmp_path)
    assert await produce_as(manager, "rdkafka") == ErrorCode.invalid_topic_exception
    assert manager.partitions[(TOPIC, 0)].log_end_offset == 0
    manager.close()


@pytest.mark.asyncio
async def test_the_admin_client_id_may_write_an_internal_topic(tmp_path: Path) -> None:
    manager = leader_of_internal_partition(tmp_path)
    assert await produce_as(manager, "__admin_client") == ErrorCode.none
    assert manager.partitions[(TOPIC, 0)].log_end_offset == 1
    manager.close()
