"""What a leader checks before it appends a produced batch (Kafka's ``LogValidator``).

Produce carries exactly one batch per partition (more is INVALID_RECORD, as in Kafka from
Produce v3 on); its header and CRC must be sound (CORRUPT_MESSAGE); it must fit
``max.message.bytes`` (MESSAGE_TOO_LARGE) once recompressed to the topic's
``compression.type``; a compacted topic takes only records with keys; and only a
coordinator may write control batches, each one transaction marker whose epochs the
producer state accepts. Nothing is written unless every check passes.
"""

from __future__ import annotations

from kafkalite.protocol.record_batch import (
    InvalidBatchError,
    MoreThanOneBatchError,
    RecordBatchHeader,
    parse_header,
    validate_produced,
)
from kafkalite.protocol.records import decode_records, recompress
from kafkalite.storage.config import LogConfig
from kafkalite.storage.errors import CorruptRecordError, InvalidRecordError, RecordTooLargeError
from kafkalite.storage.log_producer_state import marker_of
from kafkalite.storage.producer_state import AppendOrigin, ProducerStateManager


def validate_leader_batch(
    records: bytes | memoryview,
    config: LogConfig,
    producer_state: ProducerStateManager,
    origin: AppendOrigin,
) -> tuple[bytes | memoryview, RecordBatchHeader]:
    """The batch as it is to be written (recompressed if the topic says so) and its
    header; raises the storage error a client is to be answered with."""
    try:
        header = validate_produced(records)
        codec = config.compression
        if codec is not None and codec != header.compression and not header.is_control:
            records = recompress(records, codec)  # the topic's compression.type
            header = parse_header(records, 0)
    except MoreThanOneBatchError as exc:
        raise InvalidRecordError(str(exc)) from exc
    except InvalidBatchError as exc:
        raise CorruptRecordError(str(exc)) from exc
    if header.size_in_bytes > config.max_message_bytes:
        raise RecordTooLargeError(
            f"batch of {header.size_in_bytes} bytes exceeds max.message.bytes "
            f"({config.max_message_bytes})"
        )
    if header.is_control:
        _check_control_batch(records, header, producer_state, origin)
    elif config.compact:
        _check_keys(records)
    return records, header


def _check_control_batch(
    records: bytes | memoryview,
    header: RecordBatchHeader,
    producer_state: ProducerStateManager,
    origin: AppendOrigin,
) -> None:
    if origin == AppendOrigin.CLIENT:
        raise InvalidRecordError("clients may not write control batches")
    marker = marker_of(records, header)
    if marker is None:
        raise InvalidRecordError("a control batch must hold one transaction marker")
    producer_state.check_marker(header, marker)


def _check_keys(batch: bytes | memoryview) -> None:
    """A compacted topic keeps the latest value per key: a record without a key has no
    place in it (Kafka: INVALID_RECORD)."""
    try:
        keyless = any(r.key is None for r in decode_records(batch))
    except InvalidBatchError as exc:
        raise CorruptRecordError(str(exc)) from exc
    if keyless:
        raise InvalidRecordError("Compacted topic cannot accept message without key")
