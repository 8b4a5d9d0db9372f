"""The ``kafkalite`` sink: Spark's Kafka-sink columns for batch and streaming writes, and
the exactly-once sink recognising a replayed micro-batch where the at-least-once sink
writes it twice."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

from kafkalite.cluster import Cluster
from tests.spark.support import forget_last_commit, produce, read_topic, run_to_end
from tests.support.topics import create_topic

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.xdist_group("spark"),
    pytest.mark.timeout(600),
]


def topics(cluster: Cluster, *partitions: int) -> list[str]:
    names = [f"k-{uuid.uuid4().hex[:8]}" for _ in partitions]
    for name, count in zip(names, partitions, strict=True):
        create_topic(cluster.bootstrap_servers, name, count, 3)
    return names


def test_batch_write_with_every_column(spark: SparkSession, cluster3: Cluster) -> None:
    a, b = topics(cluster3, 2, 1)
    rows = [("k1", b"v1", a, 1, [("h", b"x")]), (None, b"v2", b, None, []), ("k3", b"v3", a, 0, [])]
    df = spark.createDataFrame(
        rows, "key string, value binary, topic string, partition int, "
        "headers array<struct<key: string, value: binary>>",
    )  # fmt: skip
    df.write.mode("append").format("kafkalite").option(
        "kafka.bootstrap.servers", cluster3.bootstrap_servers
    ).save()
    written = read_topic(cluster3.bootstrap_servers, a)
    assert [(r.partition, r.key, r.value, r.headers) for r in written] == [
        (0, b"k3", b"v3", ()),
        (1, b"k1", b"v1", (("h", b"x"),)),
    ]  # fmt: skip
    assert [r.value for r in read_topic(cluster3.bootstrap_servers, b)] == [b"v2"]
    # the topic option wins over the column
    df.select("value", "topic").write.mode("append").format("kafkalite").option(
        "kafka.bootstrap.servers", cluster3.bootstrap_servers
    ).option("topic", b).save()
    assert len(read_topic(cluster3.bootstrap_servers, b)) == 4


def test_a_wrong_schema_fails_before_any_write(spark: SparkSession, cluster3: Cluster) -> None:
    df = spark.createDataFrame([(1, "x")], "key int, word string")
    with pytest.raises(Exception, match=r"a 'value' column .* is required; 'key' must be"):
        df.write.mode("append").format("kafkalite").option(
            "kafka.bootstrap.servers", cluster3.bootstrap_servers
        ).option("topic", "anything").save()


@pytest.mark.parametrize("guarantee", ["exactly-once", "at-least-once"])
def test_a_replayed_micro_batch(
    spark: SparkSession, cluster3: Cluster, tmp_path: Path, guarantee: str
) -> None:
    """Three micro-batches of 10; then the checkpoint forgets that the last one committed
    (as when the driver dies between writing and committing it), so Spark runs it again.
    The exactly-once sink recognises it; the at-least-once sink writes it twice."""
    source, output = topics(cluster3, 1, 1)
    bootstrap = cluster3.bootstrap_servers
    produce(bootstrap, source, [b"%d" % i for i in range(30)], 0)
    checkpoint = tmp_path / "checkpoint"

    def start() -> StreamingQuery:
        return (
            spark.readStream.format("kafkalite")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("subscribe", source)
            .option("startingOffsets", "earliest")
            .option("maxOffsetsPerTrigger", "10")
            .load()
            .select(F.col("value"))
            .writeStream.format("kafkalite")
            .option("kafka.bootstrap.servers", bootstrap)
            .option("topic", output)
            .option("deliveryGuarantee", guarantee)
            .option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True)
            .start()
        )

    run_to_end(start)
    commits = sorted((checkpoint / "commits").glob("[0-9]*"), key=lambda p: int(p.name))
    assert [p.name for p in commits] == ["0", "1", "2"]
    assert forget_last_commit(checkpoint) == 2
    run_to_end(start)
    values = [r.value for r in read_topic(bootstrap, output)]
    expected = [b"%d" % i for i in range(30)]
    if guarantee == "exactly-once":
        assert values == expected
    else:
        assert values == expected + expected[20:]  # batch 2, twice
