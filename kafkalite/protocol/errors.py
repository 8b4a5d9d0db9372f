"""Kafka's error codes, and the exception that carries one from deep code to a response.

The codes are kio's ``ErrorCode`` enum, generated from Kafka's own table, so a student can
look any of them up in Kafka's documentation under the same name.
"""

from __future__ import annotations

from kio.schema.errors import ErrorCode

__all__ = ["ErrorCode", "KafkaError"]


class KafkaError(Exception):
    """An operation failed with a Kafka error code that the handler puts in its response."""

    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        super().__init__(message or code.name)
        self.code = code
        self.message = message
