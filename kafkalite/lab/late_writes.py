"""A producer's late transactional write, for the transactions lab's hanging transaction.

A real producer adds each partition to its transaction before writing there, so a student
cannot make one write a transactional batch outside a transaction. Its *retry* can: a
batch held up on the network (or a zombie that wakes) reaches the leader after the
transaction has ended. ``late_write`` puts exactly that batch on the wire - the
producer's id and epoch, marked transactional, with a Produce v11 as Kafka 4.0's producer
sends it - to the partition's leader, and returns the error code the leader answers.

``set_transaction_verification`` switches KIP-890's verification on or off on every
broker (``transaction.partition.verification.enable``, a setting Kafka lets change live):
off is the pre-KIP-890 path, where the late write opens a transaction that never ends.
"""

from __future__ import annotations

import datetime
import socket
import struct
import time
from typing import TYPE_CHECKING, Any

from kafka.admin import ConfigResource, ConfigResourceType
from kio.schema.produce.v11 import request as produce

from kafkalite.protocol.codec import build, decode_response, encode_request
from kafkalite.protocol.records import Record, build_batch

if TYPE_CHECKING:
    from kafka import KafkaProducer

    from kafkalite.lab.lab import Lab

VERIFICATION = "transaction.partition.verification.enable"
NOT_ENOUGH_REPLICAS = 19
"""The leader could not verify yet (the coordinator still ends the last transaction):
every producer retries it, and so does ``late_write``."""
RETRIES = 50
RETRY_BACKOFF_S = 0.1  # a producer's retry.backoff.ms


def set_transaction_verification(lab: Lab, enabled: bool) -> None:
    """Verification on or off for every broker (a per-broker dynamic setting each)."""
    value = "true" if enabled else "false"
    resources = [
        ConfigResource(ConfigResourceType.BROKER, str(b.broker_id), configs={VERIFICATION: value})
        for b in lab.cluster.spec.brokers
    ]
    with lab.admin() as admin:
        admin.alter_configs(resources, incremental=True, raise_on_unknown=False)


def late_write(lab: Lab, producer: KafkaProducer, topic: str, partition: int, value: bytes) -> int:
    """What the partition's leader answers a transactional batch of ``producer`` (its
    current id and epoch) that arrives outside any transaction: 0 when it takes it."""
    ids = producer._transaction_manager.producer_id_and_epoch  # the ids on its batches
    now = int(datetime.datetime.now(datetime.UTC).timestamp() * 1000)
    batch = build_batch(
        [Record(None, value, now)],
        producer_id=int(ids.producer_id),
        producer_epoch=int(ids.epoch),
        base_sequence=0,
        transactional=True,
    )
    request = build(
        produce.ProduceRequest,
        {
            "transactional_id": producer.config["transactional_id"],
            "acks": -1,
            "timeout": 10_000,
            "topic_data": (
                build(
                    produce.TopicProduceData,
                    {
                        "name": topic,
                        "partition_data": (
                            build(
                                produce.PartitionProduceData, {"index": partition, "records": batch}
                            ),
                        ),
                    },
                ),
            ),
        },
    )
    leader = lab.leader(topic, partition)
    address = next(b.address for b in lab.cluster.spec.brokers if b.broker_id == leader)
    for _ in range(RETRIES):
        response = _exchange(address, request)
        error = int(response.responses[0].partition_responses[0].error_code)
        if error != NOT_ENOUGH_REPLICAS:
            return error
        time.sleep(RETRY_BACKOFF_S)  # the coordinator is still writing the last markers
    return error


def _exchange(address: str, request: Any) -> Any:
    """One request and its response, on a connection of its own."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=15) as sock:
        sock.sendall(encode_request(request, 1, "kafkalite-lab-late-write"))
        size = struct.unpack(">i", _read(sock, 4))[0]
        frame = _read(sock, size)
    return decode_response(request.__api_key__, request.__version__, frame)


def _read(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(n)
        if not chunk:
            raise ConnectionError("the broker closed the connection")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)
