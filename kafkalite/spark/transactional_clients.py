"""The exactly-once sink's Kafka clients, kept in a Python worker from one micro-batch to
the next.

Making a transactional producer costs connections, a FindCoordinator and an
InitProducerId (which the coordinator writes to its log, replicated) before the first
record; the consumer that reads a task's batch record costs another connection and
FindCoordinator. Done for every task of every micro-batch, this was most of a small
batch's time. Spark reuses its Python workers for later tasks (``spark.python.worker.reuse``,
true by default), so a worker keeps, per transactional id, the clients of the last task
that committed with it, and the next task of that id in the same worker starts at
``begin_transaction``.

Only clients in a clean state are kept: after a committed transaction, or after a
recognised replay. A task that fails drops its clients (the next one starts afresh, and
its InitProducerId ends whatever was left open). Fencing is unchanged: a task of the same
partition may have run in another worker since, with its own producer and a newer epoch;
this producer's next transaction is then refused by the coordinator before any record is
written (PRODUCER_FENCED, a fatal error) and the task starts again with new clients.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from confluent_kafka import Consumer, Producer


@dataclass(slots=True)
class TransactionalClients:
    """One transactional id's producer and the consumer of its group's batch record."""

    transactional_id: str
    producer: Producer
    group: Consumer

    def close(self) -> None:
        """Drop both clients. The producer is not closed (close() would abort and flush:
        the next InitProducerId of this id ends an open transaction anyway)."""
        with contextlib.suppress(Exception):  # a consumer of a dead cluster may refuse
            self.group.close()


class ClientCache:
    """Per-process clients by transactional id: ``take`` one out (a task owns it while it
    runs), ``keep`` it once the task has committed."""

    def __init__(self) -> None:
        self._clients: dict[str, TransactionalClients] = {}

    def take(self, transactional_id: str) -> TransactionalClients | None:
        return self._clients.pop(transactional_id, None)

    def keep(self, clients: TransactionalClients) -> None:
        previous = self._clients.pop(clients.transactional_id, None)
        if previous is not None and previous is not clients:
            previous.close()
        self._clients[clients.transactional_id] = clients


CACHE = ClientCache()
"""This Python worker's clients (module state lives as long as the worker process)."""
