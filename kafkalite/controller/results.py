"""What every controller operation returns: the records to append and the answer to give
once they are committed (nothing changes before the records are replayed)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from kafkalite.metadata.records import MetadataRecord
from kafkalite.protocol.errors import ErrorCode

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ControllerResult(Generic[T]):
    records: list[MetadataRecord]
    response: T


@dataclass(frozen=True, slots=True)
class ApiResult:
    """The outcome of one item of a batched admin request (one topic, one resource)."""

    error: ErrorCode = ErrorCode.none
    message: str | None = None
