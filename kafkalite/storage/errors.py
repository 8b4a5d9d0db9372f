"""Storage failures, each carrying the Kafka error code the client must see."""

from __future__ import annotations

from kafkalite.protocol.errors import ErrorCode


class StorageError(Exception):
    error_code: ErrorCode = ErrorCode.unknown_server_error


class CorruptRecordError(StorageError):
    error_code = ErrorCode.corrupt_message


class UnexpectedAppendOffsetError(CorruptRecordError):
    """A follower's first fetched batch begins below its log end (Kafka's
    ``UnexpectedAppendOffsetException``): the batch's offsets, for the caller to judge
    whether an empty log may restart at its base (a log start inside a batch)."""

    def __init__(self, message: str, first_offset: int, last_offset: int) -> None:
        super().__init__(message)
        self.first_offset = first_offset
        self.last_offset = last_offset


class RecordTooLargeError(StorageError):
    error_code = ErrorCode.message_too_large


class OffsetOutOfRangeError(StorageError):
    error_code = ErrorCode.offset_out_of_range


class OutOfOrderSequenceError(StorageError):
    error_code = ErrorCode.out_of_order_sequence_number


class InvalidProducerEpochError(StorageError):
    error_code = ErrorCode.invalid_producer_epoch


class LogDirLockedError(StorageError):
    """Another process owns this data directory."""


class InvalidTxnStateError(StorageError):
    """A producer with an open transaction sent a non-transactional batch."""

    error_code = ErrorCode.invalid_txn_state


class TransactionCoordinatorFencedError(StorageError):
    """A marker from a coordinator older than one this partition already heard from."""

    error_code = ErrorCode.transaction_coordinator_fenced


class InvalidRecordError(StorageError):
    """A batch no client may write, such as a control batch (Kafka: INVALID_RECORD)."""

    error_code = ErrorCode.invalid_record
