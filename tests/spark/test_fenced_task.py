"""A task of the exactly-once sink whose producer is fenced starts over with a new one.

About one run in eight, ``test_broker_faults`` stopped on such a fence: the isolated leader
of the output partition still coordinated the task's transactional id in its own view after
the real coordinator had moved (a preferred-leader election), verified the task's first
write (KIP-890) against the producer epoch it last knew and refused the newer one as fenced,
as Kafka's coordinator does; librdkafka makes that fatal. Here the fence is made the plain
way, by a second instance of the id starting between the task's InitProducerId and its
first write, which gives the task the same fatal error from the same check. Run without
Spark: the task's class, as a Spark worker runs it, against a real broker.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from confluent_kafka import Producer

from kafkalite.cluster import Cluster
from kafkalite.spark.exactly_once_task import ExactlyOnceTask
from kafkalite.spark.options import KafkaConnection, SinkOptions
from kafkalite.spark.producing import make_producer
from kafkalite.spark.sink_rows import KafkaRecord
from tests.spark.support import read_topic
from tests.support.topics import create_topic

pytestmark = [pytest.mark.spark, pytest.mark.xdist_group("spark")]


class FencedOnce(ExactlyOnceTask):
    """The task, with another instance of its transactional id started right after its
    first producer's InitProducerId (as a zombie's restart, or a stale coordinator's
    verdict, would fence it)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.fenced_by: list[Producer] = []

    def _new_producer(self) -> Any:
        producer = super()._new_producer()
        if not self.fenced_by:
            other = make_producer(
                self.options.connection, **{"transactional.id": self.transactional_id}
            )
            other.init_transactions(self.timeout_s)
            self.fenced_by.append(other)
        return producer


def test_a_fenced_task_starts_over_and_writes_its_rows_once(cluster: Cluster) -> None:
    output = f"fenced-{uuid.uuid4().hex[:8]}"
    create_topic(cluster.bootstrap_servers, output, 1, 1)
    options = SinkOptions(KafkaConnection(cluster.bootstrap_servers), output, "exactly-once")
    rows = [KafkaRecord(output, 0, None, b"%d" % i) for i in range(20)]

    task = FencedOnce(options, str(uuid.uuid4()), 0, 0)
    written = task.run(rows)

    assert len(task.fenced_by) == 1  # the fence happened, once
    task.fenced_by.clear()  # (closes it)
    assert written.written == 20 and not written.replayed
    assert [r.value for r in read_topic(cluster.bootstrap_servers, output)] == [
        r.value for r in rows
    ]
