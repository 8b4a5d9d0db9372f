"""The exactly-once pipeline keeps running while the cluster under it fails: a partition
leader is killed, another is isolated from its peers, the active controller is killed.
Afterwards the output is the input once, judged by the history checker."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from examples.spark import exactly_once_topic
from kafkalite.cluster import Cluster
from tests.spark.orders_check import OrderLoad, judge
from tests.spark.support import end_offsets, source_end, still_running, wait_for_batches
from tests.support.quorum import controller
from tests.support.topics import create_topic
from tests.support.waiting import wait_for

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.xdist_group("spark"),
    pytest.mark.timeout(600),
]

FAULT_S = 4  # how long each fault lasts: several micro-batches
Target = Callable[[], int]  # which broker, asked when the fault begins


def leader(cluster: Cluster, topic: str, partition: int) -> int:
    return next(
        p["leader"]
        for p in cluster.status()["partitions"]
        if p["topic"] == topic and p["partition"] == partition
    )


def test_leaders_and_controller_fail_while_the_query_runs(
    spark: SparkSession, make_cluster3: Callable[..., Cluster], tmp_path: Path
) -> None:
    cluster = make_cluster3()
    bootstrap = cluster.bootstrap_servers
    for topic in ("orders", "enriched"):
        create_topic(bootstrap, topic, 3, 3, {"min.insync.replicas": "2"})
    query = exactly_once_topic.start(
        spark, bootstrap, "orders", "enriched", str(tmp_path / "checkpoint")
    )
    try:
        with OrderLoad(bootstrap, "orders", rate=100) as orders:
            wait_for_batches(query, -1, 120, "the first micro-batch")
            faults: list[tuple[str, Callable[[int], None], Callable[[int], None], Target]] = [
                ("kill", cluster.kill, cluster.start, lambda: leader(cluster, "orders", 0)),
                ("isolate", cluster.isolate, cluster.heal, lambda: leader(cluster, "orders", 1)),
                ("kill", cluster.kill, cluster.start, lambda: controller(cluster) or 1),
            ]
            for what, fault, undo, target in faults:
                broker = target()
                print(what, broker)
                batch = query.lastProgress["batchId"]
                fault(broker)
                time.sleep(FAULT_S)
                undo(broker)
                wait_for_batches(query, batch + 2, 120, f"micro-batches after: {what}")
            orders.stop()
        ends = end_offsets(bootstrap, "orders")
        wait_for(
            lambda: (
                {int(p): o for p, o in source_end(still_running(query)).get("orders", {}).items()}
                == ends
            ),
            120,
            f"the query to read to {ends}",
        )
    finally:
        query.stop()
    verdict = judge(bootstrap, "orders", "enriched", orders.acks)
    print(verdict.report.summary())
    assert verdict.output_records == len(orders.acks) > 0
    verdict.assert_exactly_once()
