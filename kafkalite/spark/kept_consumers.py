"""Kafka consumers a Spark Python worker keeps from one task to the next.

Spark reuses its Python workers for later tasks (``spark.python.worker.reuse``, true by
default). A new consumer costs connections to the brokers, a metadata request and, for a
group, a FindCoordinator before its first answer; in a small micro-batch that was a good
part of a task's time. A consumer carries nothing one task could spoil for the next: the
source's reader is assigned its ranges afresh by every task (and unassigned after them,
so a kept consumer fetches nothing while it waits), and the exactly-once sink's group
consumer only reads the batch record its group committed. So each worker keeps them,
by their settings.

Producers are not kept. A transactional producer is valid only until another producer
of its transactional id starts (its InitProducerId fences the older one), and Spark
hands a task's two Python runners (the source's read, the sink's write) to its idle
workers in turn, from a first-in first-out queue, so the two workers swap roles from one
micro-batch to the next: a producer kept in the writing worker was found fenced nearly
every time, and dropping it with its records queued cost more than a new one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaError


class ClientErrors:
    """The last error librdkafka reported for a consumer (its ``error_cb``): what a
    stalled read names, since ``poll`` itself says nothing about unreachable brokers."""

    def __init__(self) -> None:
        self.last = "no response"

    def note(self, error: KafkaError) -> None:
        self.last = str(error)


@dataclass(slots=True)
class KeptConsumer:
    consumer: Consumer
    errors: ClientErrors

    def close(self) -> None:
        with contextlib.suppress(Exception):  # a consumer of a dead cluster may refuse
            self.consumer.close()


class KeptConsumers:
    """This process's consumers by their settings. A task borrows one (a new one if none
    is kept); it is kept again only if the task ends cleanly, and closed otherwise."""

    def __init__(self) -> None:
        self._kept: dict[str, KeptConsumer] = {}

    @contextlib.contextmanager
    def borrow(self, config: dict[str, Any]) -> Iterator[KeptConsumer]:
        key = repr(sorted(config.items()))
        kept = self._kept.pop(key, None)
        if kept is None:
            errors = ClientErrors()
            kept = KeptConsumer(Consumer({**config, "error_cb": errors.note}), errors)
        kept.errors.last = "no response"
        try:
            yield kept
        except BaseException:
            kept.close()
            raise
        self._kept[key] = kept

    def __len__(self) -> int:
        return len(self._kept)


KEPT = KeptConsumers()
"""This Python worker's consumers (module state lives as long as the worker process)."""
