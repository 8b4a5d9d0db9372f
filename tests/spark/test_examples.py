"""Pipelines (a) and (b) of ``examples/spark`` on a real cluster: per-customer totals of
the Parquet files read back through Spark, and of the per-batch files ``foreachBatch``
writes, equal the totals of the orders, also after a micro-batch ran a second time (the
checkpoint forgot its commit, as when the driver dies between writing and committing).
Pipeline (c), the exactly-once Kafka sink, is under faults in the other test files."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.streaming import StreamingQuery

from examples.spark import foreach_batch, parquet_sink
from examples.spark.orders import expected_totals, produce_orders
from kafkalite.cluster import Cluster
from tests.spark.support import forget_last_commit, run_to_end
from tests.support.topics import create_topic

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.xdist_group("spark"),
    pytest.mark.timeout(600),
]

Totals = dict[str, tuple[int, int]]
PIPELINES: dict[
    str, tuple[Callable[..., StreamingQuery], Callable[[SparkSession, str], Totals]]
] = {
    "parquet": (parquet_sink.start, parquet_sink.read_back),
    "foreachBatch": (foreach_batch.start, lambda _spark, out: foreach_batch.read_totals(out)),
}
ORDERS = 200


@pytest.mark.parametrize("pipeline", list(PIPELINES))
def test_totals_are_the_orders_once_after_a_replayed_batch(
    spark: SparkSession, cluster3: Cluster, tmp_path: Path, pipeline: str
) -> None:
    start, read_totals = PIPELINES[pipeline]
    bootstrap = cluster3.bootstrap_servers
    topic = f"orders-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap, topic, 3, 3)
    assert produce_orders(bootstrap, topic, range(ORDERS)) == ORDERS
    output, checkpoint = str(tmp_path / "output"), tmp_path / "checkpoint"

    def run() -> StreamingQuery:  # two micro-batches: 120 orders, then 80
        return start(spark, bootstrap, topic, output, str(checkpoint), True, "120")

    run_to_end(run)
    expected = expected_totals(range(ORDERS))
    assert read_totals(spark, output) == expected
    replayed = forget_last_commit(checkpoint)
    assert replayed == 1
    run_to_end(run)
    assert (checkpoint / "commits" / str(replayed)).exists(), "the batch did not run again"
    assert read_totals(spark, output) == expected
