"""What the transaction coordinator stores in ``__transaction_state``, and how.

One record per state transition, keyed by transactional id; the topic is compacted, so
the latest value per key is the state. The records are Kafka's own (``TransactionLogKey``
and ``TransactionLogValue``, version 0), so the bytes are those a Kafka broker writes;
kio has no schema for them, so they are declared here in kio's style and encoded by
kio's serializer. Each starts with an int16 version; strings are int16-length UTF-8::

    key    version int16 = 0 | transactional_id string
    value  version int16 = 0
           producer_id                          int64
           producer_epoch                       int16
           transaction_timeout_ms               int32
           transaction_status                   int8    TransactionState.id
           transaction_partitions               [topic string, partition_ids [int32]]
           transaction_last_update_timestamp_ms int64
           transaction_start_timestamp_ms       int64
    (a null value is a tombstone: the id expired)

Version 1 (flexible, as Kafka 4.0 writes it for transaction version 2) adds tagged fields:
the previous producer id (tag 0), the producer id that follows an exhausted epoch (tag 1)
and the client's transaction version (tag 2); a transition of transaction version 2 is
written in it, any other in version 0, byte for byte as before.

Version 0 does not store the previous producer id and epoch (KIP-360's retry memory), as
Kafka 3's coordinator does not: a retried InitProducerId that spans a coordinator change
gets PRODUCER_FENCED. A transactional id must fit the int16 length (32767 bytes).
"""

# No ``from __future__ import annotations``: kio reads the field types at run time.
import io
import struct
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from kio.serial import entity_reader, entity_writer
from kio.serial.errors import SerialError
from kio.static.constants import EntityType
from kio.static.primitive import i8, i16, i32, i64

from kafkalite.coordinator.partition_loads import LogChunk
from kafkalite.coordinator.transaction.state import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    TransactionMetadata,
    TransactionState,
    TxnTransitMetadata,
)
from kafkalite.protocol.records import Record

TRANSACTION_STATE_TOPIC = "__transaction_state"
MAX_TRANSACTIONAL_ID_BYTES = 0x7FFF
_VERSION = struct.Struct(">h")


@dataclass(frozen=True, slots=True, kw_only=True)
class TransactionLogKey:
    __type__: ClassVar = EntityType.data
    __version__: ClassVar[i16] = i16(0)
    __flexible__: ClassVar[bool] = False
    transactional_id: str = field(metadata={"kafka_type": "string"})


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionsSchema:
    __type__: ClassVar = EntityType.nested
    __version__: ClassVar[i16] = i16(0)
    __flexible__: ClassVar[bool] = False
    topic: str = field(metadata={"kafka_type": "string"})
    partition_ids: tuple[i32, ...] = field(metadata={"kafka_type": "int32"}, default=())


@dataclass(frozen=True, slots=True, kw_only=True)
class TransactionLogValue:
    __type__: ClassVar = EntityType.data
    __version__: ClassVar[i16] = i16(0)
    __flexible__: ClassVar[bool] = False
    producer_id: i64 = field(metadata={"kafka_type": "int64"})
    producer_epoch: i16 = field(metadata={"kafka_type": "int16"})
    transaction_timeout_ms: i32 = field(metadata={"kafka_type": "int32"})
    transaction_status: i8 = field(metadata={"kafka_type": "int8"})
    transaction_partitions: tuple[PartitionsSchema, ...] | None
    transaction_last_update_timestamp_ms: i64 = field(metadata={"kafka_type": "int64"})
    transaction_start_timestamp_ms: i64 = field(metadata={"kafka_type": "int64"})


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionsSchemaV1:
    __type__: ClassVar = EntityType.nested
    __version__: ClassVar[i16] = i16(1)
    __flexible__: ClassVar[bool] = True
    topic: str = field(metadata={"kafka_type": "string"})
    partition_ids: tuple[i32, ...] = field(metadata={"kafka_type": "int32"}, default=())


@dataclass(frozen=True, slots=True, kw_only=True)
class TransactionLogValueV1:
    __type__: ClassVar = EntityType.data
    __version__: ClassVar[i16] = i16(1)
    __flexible__: ClassVar[bool] = True
    producer_id: i64 = field(metadata={"kafka_type": "int64"})
    previous_producer_id: i64 = field(metadata={"kafka_type": "int64", "tag": 0}, default=i64(-1))
    next_producer_id: i64 = field(metadata={"kafka_type": "int64", "tag": 1}, default=i64(-1))
    producer_epoch: i16 = field(metadata={"kafka_type": "int16"})
    transaction_timeout_ms: i32 = field(metadata={"kafka_type": "int32"})
    transaction_status: i8 = field(metadata={"kafka_type": "int8"})
    transaction_partitions: tuple[PartitionsSchemaV1, ...] | None
    transaction_last_update_timestamp_ms: i64 = field(metadata={"kafka_type": "int64"})
    transaction_start_timestamp_ms: i64 = field(metadata={"kafka_type": "int64"})
    client_transaction_version: i16 = field(
        metadata={"kafka_type": "int16", "tag": 2}, default=i16(0)
    )


class InvalidTransactionLogRecordError(ValueError):
    """A record in ``__transaction_state`` that is not one this coordinator writes."""


def key_bytes(transactional_id: str) -> bytes:
    out = io.BytesIO()
    out.write(_VERSION.pack(0))
    entity_writer(TransactionLogKey)(out, TransactionLogKey(transactional_id=transactional_id))
    return out.getvalue()


def value_bytes(transit: TxnTransitMetadata) -> bytes:
    by_topic: dict[str, list[int]] = {}
    for topic, partition in sorted(transit.topic_partitions):
        by_topic.setdefault(topic, []).append(partition)
    common: dict[str, Any] = {
        "producer_id": i64(transit.producer_id),
        "producer_epoch": i16(transit.producer_epoch),
        "transaction_timeout_ms": i32(transit.txn_timeout_ms),
        "transaction_status": i8(transit.txn_state.id),
        "transaction_last_update_timestamp_ms": i64(transit.txn_last_update_timestamp),
        "transaction_start_timestamp_ms": i64(transit.txn_start_timestamp),
    }
    out = io.BytesIO()
    if transit.client_transaction_version >= 2:
        out.write(_VERSION.pack(1))
        entity_writer(TransactionLogValueV1)(
            out,
            TransactionLogValueV1(
                **common,
                previous_producer_id=i64(transit.last_producer_id),
                next_producer_id=i64(transit.next_producer_id),
                client_transaction_version=i16(transit.client_transaction_version),
                transaction_partitions=tuple(
                    PartitionsSchemaV1(topic=t, partition_ids=tuple(i32(p) for p in ps))
                    for t, ps in by_topic.items()
                ),
            ),
        )
        return out.getvalue()
    out.write(_VERSION.pack(0))
    entity_writer(TransactionLogValue)(
        out,
        TransactionLogValue(
            **common,
            transaction_partitions=tuple(
                PartitionsSchema(topic=t, partition_ids=tuple(i32(p) for p in ps))
                for t, ps in by_topic.items()
            ),
        ),
    )
    return out.getvalue()


def transition_record(transactional_id: str, transit: TxnTransitMetadata) -> Record:
    return Record(
        key_bytes(transactional_id),
        value_bytes(transit),
        transit.txn_last_update_timestamp,
    )


def decode(record: Record) -> tuple[str, TxnTransitMetadata | None]:
    """``(transactional_id, state)``; state None for a tombstone."""
    if record.key is None or len(record.key) < 2:
        raise InvalidTransactionLogRecordError("a transaction log record needs a key")
    try:
        if _VERSION.unpack_from(record.key)[0] != 0:
            raise InvalidTransactionLogRecordError("unknown key version")
        key, _ = entity_reader(TransactionLogKey)(bytes(record.key), 2)
        if record.value is None:
            return key.transactional_id, None
        version = _VERSION.unpack_from(record.value)[0]
        if version not in (0, 1):
            raise InvalidTransactionLogRecordError("unknown value version")
        value: TransactionLogValue | TransactionLogValueV1
        if version == 0:
            value, _ = entity_reader(TransactionLogValue)(bytes(record.value), 2)
        else:
            value, _ = entity_reader(TransactionLogValueV1)(bytes(record.value), 2)
    except (SerialError, ValueError, struct.error, IndexError, UnicodeDecodeError) as exc:
        raise InvalidTransactionLogRecordError(str(exc)) from exc
    return key.transactional_id, TxnTransitMetadata(
        producer_id=int(value.producer_id),
        last_producer_id=int(getattr(value, "previous_producer_id", NO_PRODUCER_ID)),
        producer_epoch=int(value.producer_epoch),
        last_producer_epoch=NO_PRODUCER_EPOCH,
        txn_timeout_ms=int(value.transaction_timeout_ms),
        txn_state=TransactionState.from_id(int(value.transaction_status)),
        topic_partitions=frozenset(
            (p.topic, int(i)) for p in value.transaction_partitions or () for i in p.partition_ids
        ),
        txn_start_timestamp=int(value.transaction_start_timestamp_ms),
        txn_last_update_timestamp=int(value.transaction_last_update_timestamp_ms),
        next_producer_id=int(getattr(value, "next_producer_id", NO_PRODUCER_ID)),
        client_transaction_version=int(getattr(value, "client_transaction_version", 0)),
    )


def replay(loaded: dict[str, TransactionMetadata], records: list[Record]) -> int:
    """Apply records of the log in order to ``loaded`` (the latest value per id wins, as
    compaction keeps; a tombstone removes the id); how many were not ours to read."""
    skipped = 0
    for record in records:
        try:
            txn_id, transit = decode(record)
        except InvalidTransactionLogRecordError:
            skipped += 1
            continue
        if transit is None:
            loaded.pop(txn_id, None)
        else:
            loaded[txn_id] = TransactionMetadata.from_transit(txn_id, transit)
    return skipped


class TransactionStateTopic(Protocol):
    """What the coordinator needs from the broker (it must never import the broker)."""

    def partition_count(self) -> int: ...

    def leader_epoch(self, partition: int) -> int | None:
        """This broker's leader epoch of the partition; None unless it leads it."""

    def led_partitions(self) -> list[int]:
        """The partitions of the topic this broker leads now."""

    async def append(self, partition: int, records: list[Record]) -> int:
        """Append and wait until committed; its first offset. Raises KafkaError."""

    def read_chunk(self, partition: int, start: int, max_bytes: int) -> LogChunk:
        """Whole batches from ``start`` (at least one, up to ``max_bytes``) below the log
        end: one step of a load. Raises KafkaError."""
