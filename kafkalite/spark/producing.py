"""Sending one task's records with a librdkafka producer, and waiting until each is
acknowledged (or the task fails): the part both sinks share."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from confluent_kafka import KafkaError, Producer

from kafkalite.spark.options import KafkaConnection
from kafkalite.spark.sink_rows import KafkaRecord

# Idempotent acks=all: a retried send is never written twice, an acknowledged one is on
# every in-sync replica.
PRODUCER_SETTINGS = {"enable.idempotence": True, "acks": "all", "linger.ms": 5}


class DeliveryError(RuntimeError):
    """A record was not acknowledged; the Spark task fails and is retried."""


def make_producer(connection: KafkaConnection, **settings: Any) -> Producer:
    return Producer(connection.client_config(**PRODUCER_SETTINGS, **settings))


def send_all(producer: Producer, records: Iterable[KafkaRecord], errors: list[str]) -> int:
    """Queue every record (waiting while librdkafka's queue is full); delivery failures
    are appended to ``errors`` as they are reported."""

    def on_delivery(error: KafkaError | None, _message: Any) -> None:
        if error is not None:
            errors.append(error.str())

    count = 0
    for record in records:
        kwargs: dict[str, Any] = {"key": record.key, "on_delivery": on_delivery}
        if record.partition is not None:
            kwargs["partition"] = record.partition
        if record.headers:
            kwargs["headers"] = list(record.headers)
        while True:
            try:
                producer.produce(record.topic, record.value, **kwargs)
                break
            except BufferError:
                producer.poll(0.05)
        producer.poll(0)
        count += 1
    return count


def flush_or_raise(producer: Producer, errors: list[str], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while (left := producer.flush(max(deadline - time.monotonic(), 0))) > 0:
        if time.monotonic() >= deadline:
            raise DeliveryError(
                f"kafkalite sink: {left} record(s) not acknowledged within {timeout_s:.0f} s"
            )
    if errors:
        raise DeliveryError(
            f"kafkalite sink: {len(errors)} record(s) failed, e.g. {errors[0]} "
            "(the task fails; Spark retries it, which may write the others again)"
        )
