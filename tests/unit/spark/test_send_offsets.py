"""The bounded send_offsets_to_transaction: librdkafka's call may never return
(librdkafka#5456); the caller gets a fatal timed-out error instead of hanging."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException, TopicPartition

from kafkalite.spark import send_offsets
from kafkalite.spark.send_offsets import is_wedged, send_offsets_to_transaction

OFFSETS = [TopicPartition("in", 0, 7)]


class FakeProducer:
    """Stands in for librdkafka's producer: returns, raises, or blocks until released."""

    def __init__(self, raises: KafkaException | None = None, blocks: bool = False) -> None:
        self.raises = raises
        self.release = threading.Event() if blocks else None
        self.calls: list[tuple[Any, ...]] = []

    def send_offsets_to_transaction(self, offsets: Any, metadata: Any, timeout: float) -> None:
        self.calls.append((offsets, metadata, timeout))
        if self.release is not None:
            self.release.wait()
        if self.raises is not None:
            raise self.raises


def test_a_call_that_returns_returns() -> None:
    producer = FakeProducer()
    send_offsets_to_transaction(producer, OFFSETS, "group metadata", 5)
    assert producer.calls == [(OFFSETS, "group metadata", 5)]


def test_the_clients_own_error_reaches_the_caller() -> None:
    error = KafkaException(KafkaError(KafkaError.INVALID_TXN_STATE, txn_requires_abort=True))
    with pytest.raises(KafkaException) as raised:
        send_offsets_to_transaction(FakeProducer(raises=error), OFFSETS, None, 5)
    assert raised.value is error
    assert not is_wedged(raised.value.args[0])


def test_a_call_that_never_returns_is_a_fatal_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(send_offsets, "GRACE_S", 0.2)
    producer = FakeProducer(blocks=True)
    started = time.monotonic()
    with pytest.raises(KafkaException) as raised:
        send_offsets_to_transaction(producer, OFFSETS, None, 0.1)
    assert time.monotonic() - started < 5
    error = raised.value.args[0]
    assert is_wedged(error) and not error.retriable() and not error.txn_requires_abort()
    assert producer.release is not None
    producer.release.set()  # the abandoned thread ends with the test
