"""A Spark Python worker's kept consumers: a task borrows one by its settings, gets it
back in its next task only if it ended cleanly; a failed task's consumer is closed."""

from __future__ import annotations

import pytest

from kafkalite.spark.kept_consumers import KeptConsumers

pytestmark = pytest.mark.unit

# librdkafka makes a consumer without reaching any broker; nothing here connects.
CONFIG = {"bootstrap.servers": "127.0.0.1:1", "group.id": "g"}


def test_a_clean_task_leaves_its_consumer_for_the_next_task_with_the_same_settings() -> None:
    kept = KeptConsumers()
    with kept.borrow(CONFIG) as first:
        first.errors.last = "broker down"
    with kept.borrow(CONFIG) as again:
        assert again is first
        assert again.errors.last == "no response"  # not the last task's error
    with kept.borrow({**CONFIG, "group.id": "other"}) as other:
        assert other is not first
    assert len(kept) == 2
    for settings in (CONFIG, {**CONFIG, "group.id": "other"}):
        with kept.borrow(settings) as borrowed:
            borrowed.close()


def test_a_failed_task_closes_its_consumer_and_the_next_task_gets_a_new_one() -> None:
    kept = KeptConsumers()
    with pytest.raises(RuntimeError), kept.borrow(CONFIG) as failed:
        raise RuntimeError("the task failed")
    with pytest.raises(RuntimeError):  # closed: librdkafka refuses to use it
        failed.consumer.assignment()
    assert len(kept) == 0
    with kept.borrow(CONFIG) as fresh:
        assert fresh is not failed
        fresh.close()
