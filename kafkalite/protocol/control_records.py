"""Control batches: the transaction markers a coordinator has partition leaders write.

A transaction ends on each of its partitions with one *control batch*: a v2 batch whose
attributes have both the transactional (bit 4) and the control (bit 5) flag, carrying the
producer id and epoch of the transaction and exactly one record. Consumers never see that
record as data; they use it to know where the producer's transaction ended and how. Its
key and value are Kafka's (``ControlRecordType`` and ``EndTransactionMarker``), encoded
with kio's schemas behind a version prefix, big-endian::

    key    (4 bytes)   version int16 = 0 | type int16   (0 = ABORT, 1 = COMMIT)
    value  (6 bytes)   version int16 = 0 | coordinator_epoch int32

``coordinator_epoch`` is the leader epoch of the ``__transaction_state`` partition whose
coordinator decided the outcome: a leader refuses a marker from an older coordinator
(TRANSACTION_COORDINATOR_FENCED), so a deposed coordinator cannot write a stale outcome.
"""

from __future__ import annotations

import enum
import io
import struct
from dataclasses import dataclass

from kio.schema.control_record_type_schema.v0.data import ControlRecordTypeSchema
from kio.schema.end_txn_marker.v0.data import EndTxnMarker
from kio.serial import entity_reader, entity_writer
from kio.serial.errors import SerialError
from kio.static.primitive import i16, i32

from kafkalite.protocol.record_batch import InvalidBatchError, RecordBatchHeader
from kafkalite.protocol.records import Record, build_batch, decode_records

CURRENT_VERSION = 0
_VERSION = struct.Struct(">h")


class ControlType(enum.IntEnum):
    """Kafka's ``ControlRecordType`` (only the transaction markers are used here)."""

    ABORT = 0
    COMMIT = 1


@dataclass(frozen=True, slots=True)
class TransactionMarker:
    """What one control batch says: how the producer's transaction ended, and who said so."""

    control_type: ControlType
    coordinator_epoch: int

    @property
    def committed(self) -> bool:
        return self.control_type == ControlType.COMMIT


def marker_key(control_type: ControlType) -> bytes:
    out = io.BytesIO()
    out.write(_VERSION.pack(CURRENT_VERSION))
    entity_writer(ControlRecordTypeSchema)(out, ControlRecordTypeSchema(type_=i16(control_type)))
    return out.getvalue()


def marker_value(coordinator_epoch: int) -> bytes:
    out = io.BytesIO()
    out.write(_VERSION.pack(CURRENT_VERSION))
    entity_writer(EndTxnMarker)(out, EndTxnMarker(coordinator_epoch=i32(coordinator_epoch)))
    return out.getvalue()


def end_txn_marker_batch(
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int,
    committed: bool,
    timestamp_ms: int,
) -> bytes:
    """The control batch a partition leader appends to end a transaction on it."""
    control_type = ControlType.COMMIT if committed else ControlType.ABORT
    record = Record(marker_key(control_type), marker_value(coordinator_epoch), timestamp_ms)
    return build_batch(
        [record],
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        transactional=True,
        control=True,
    )


def read_marker(
    batch: bytes | memoryview, pos: int, header: RecordBatchHeader
) -> TransactionMarker:
    """Decode the marker of the control batch at ``pos``; InvalidBatchError if it is none."""
    if not header.is_control:
        raise InvalidBatchError("not a control batch")
    records = decode_records(batch, pos)
    if len(records) != 1:
        raise InvalidBatchError("a control batch holds exactly one record")
    return marker_of_record(records[0])


def marker_of_record(record: Record) -> TransactionMarker:
    """Decode the record of a control batch; InvalidBatchError if it is no marker."""
    key, value = record.key, record.value or b""
    if key is None or len(key) < 4:
        raise InvalidBatchError("a control record has a 4-byte key")
    try:
        control, _ = entity_reader(ControlRecordTypeSchema)(bytes(key), 2)
        epoch = -1
        if len(value) >= 6:
            marker, _ = entity_reader(EndTxnMarker)(bytes(value), 2)
            epoch = int(marker.coordinator_epoch)
    except SerialError as exc:
        raise InvalidBatchError(f"unreadable control record: {exc}") from exc
    if int(control.type_) not in (ControlType.ABORT, ControlType.COMMIT):
        raise InvalidBatchError(f"control record type {control.type_} is not a transaction marker")
    return TransactionMarker(ControlType(int(control.type_)), epoch)
