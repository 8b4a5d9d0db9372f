"""The sink's per-worker client cache: a task owns the clients it took; only clients put
back after a clean end are found by the next task, and a replaced pair is closed."""

from __future__ import annotations

from typing import Any

import pytest

from kafkalite.spark.transactional_clients import ClientCache, TransactionalClients

pytestmark = pytest.mark.unit


class FakeConsumer:
    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


def clients(txn_id: str) -> TransactionalClients:
    producer: Any = object()
    consumer: Any = FakeConsumer()
    return TransactionalClients(txn_id, producer, consumer)


def test_a_task_takes_its_clients_out_until_it_keeps_them() -> None:
    cache = ClientCache()
    assert cache.take("t-0") is None
    first = clients("t-0")
    cache.keep(first)
    assert cache.take("t-0") is first
    assert cache.take("t-0") is None  # taken: a failing task simply never puts it back
    cache.keep(first)
    assert cache.take("t-1") is None


def test_keeping_newer_clients_closes_the_older_ones() -> None:
    cache = ClientCache()
    old, new = clients("t-0"), clients("t-0")
    cache.keep(old)
    cache.keep(new)
    assert old.group.closed and not new.group.closed
    assert cache.take("t-0") is new
