"""The ``kafkalite`` source against a real three-broker cluster: Spark's columns and
options, committed data only by default, checkpointed offsets, new partitions, and one
clear error for each way a read can go wrong."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewPartitions
from pyspark.sql import DataFrameReader, SparkSession

from kafkalite.cluster import Cluster
from tests.spark.support import produce, source_end, wait_until_read
from tests.support.topics import create_topic
from tests.support.waiting import wait_for

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.xdist_group("spark"),
    pytest.mark.timeout(600),
]


def new_topic(cluster: Cluster, partitions: int = 3) -> str:
    name = f"s-{uuid.uuid4().hex[:8]}"
    create_topic(cluster.bootstrap_servers, name, partitions, 3)
    return name


def test_batch_read_has_sparks_columns(spark: SparkSession, cluster3: Cluster) -> None:
    topic = new_topic(cluster3)
    before_ms = int(time.time() * 1000)
    produce(
        cluster3.bootstrap_servers, topic, [b"v%d" % i for i in range(10)], 1, b"k1", [("h", b"1")]
    )
    produce(cluster3.bootstrap_servers, topic, [b"w%d" % i for i in range(5)], 2)
    df = (
        spark.read.format("kafkalite")
        .option("kafka.bootstrap.servers", cluster3.bootstrap_servers)
        .option("subscribe", topic)
        .option("includeHeaders", "true")
        .load()
    )
    assert df.columns == [
        "key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers"
    ]  # fmt: skip
    rows = sorted(df.collect(), key=lambda r: (r.partition, r.offset))
    assert [(r.partition, r.offset, r.value) for r in rows] == [
        (1, i, b"v%d" % i) for i in range(10)
    ] + [(2, i, b"w%d" % i) for i in range(5)]
    first = rows[0]
    assert (first.key, first.topic, first.timestampType) == (b"k1", topic, 0)
    assert [(h.key, h.value) for h in first.headers] == [("h", b"1")]
    assert rows[-1].key is None and rows[-1].headers == []
    assert before_ms - 5000 <= first.timestamp.timestamp() * 1000 <= time.time() * 1000 + 5000
    without_headers = (
        spark.read.format("kafkalite")
        .option("kafka.bootstrap.servers", cluster3.bootstrap_servers)
        .option("subscribe", topic)
        .load()
    )
    assert "headers" not in without_headers.columns and without_headers.count() == 15


def test_offsets_json_timestamps_and_min_partitions(spark: SparkSession, cluster3: Cluster) -> None:
    topic = new_topic(cluster3, partitions=2)
    produce(cluster3.bootstrap_servers, topic, [b"a%d" % i for i in range(40)], 0)
    time.sleep(0.05)  # the next records get a later timestamp than the first 40
    middle_ms = int(time.time() * 1000)
    produce(cluster3.bootstrap_servers, topic, [b"b%d" % i for i in range(20)], 0)
    produce(cluster3.bootstrap_servers, topic, [b"c%d" % i for i in range(10)], 1)

    def reader() -> DataFrameReader:  # a new one each time: options accumulate on a reader
        return (
            spark.read.format("kafkalite")
            .option("kafka.bootstrap.servers", cluster3.bootstrap_servers)
            .option("subscribe", topic)
        )

    ranged = (
        reader()
        .option("startingOffsets", json.dumps({topic: {"0": 5, "1": -2}}))
        .option("endingOffsets", json.dumps({topic: {"0": 15, "1": -1}}))
        .option("minPartitions", "4")
        .load()
    )
    assert ranged.rdd.getNumPartitions() >= 4
    assert sorted(
        (r.partition, r.offset) for r in ranged.select("partition", "offset").collect()
    ) == [(0, o) for o in range(5, 15)] + [(1, o) for o in range(10)]
    since = reader().option("startingTimestamp", str(middle_ms)).load()
    values = {r.value for r in since.select("value").collect()}
    assert {b"b%d" % i for i in range(20)} <= values and not any(v.startswith(b"a") for v in values)
    with pytest.raises(Exception, match="name every partition"):
        reader().option("startingOffsets", json.dumps({topic: {"0": 1}})).load().collect()


def test_read_committed_by_default(spark: SparkSession, cluster3: Cluster) -> None:
    """A committed, an aborted and an open transaction: read_committed sees only the
    committed one (and nothing after the open one's first record); read_uncommitted sees
    all of them. Once the open one commits, it is read too: as in Kafka, EndTxn is
    answered once the coordinator has logged the decision, and the commit markers that
    move the last stable offset are written after, so a read right after
    ``commit_transaction`` may not see it yet."""
    topic = new_topic(cluster3, partitions=1)
    producer = Producer(
        {"bootstrap.servers": cluster3.bootstrap_servers, "transactional.id": f"tx-{topic}"}
    )
    producer.init_transactions(30)
    for label, commit in (("committed", True), ("aborted", False)):
        producer.begin_transaction()
        for i in range(3):
            producer.produce(topic, f"{label}-{i}".encode())
        producer.flush(30)
        producer.commit_transaction(30) if commit else producer.abort_transaction(30)
    producer.begin_transaction()
    producer.produce(topic, b"open-0")
    producer.flush(30)
    produce(cluster3.bootstrap_servers, topic, [b"plain-after-open"])

    def values(isolation: str | None = None) -> list[bytes]:
        reader = (
            spark.read.format("kafkalite")
            .option("kafka.bootstrap.servers", cluster3.bootstrap_servers)
            .option("subscribe", topic)
        )
        if isolation:
            reader = reader.option("kafka.isolation.level", isolation)
        return [r.value for r in reader.load().orderBy("offset").collect()]

    committed = [b"committed-%d" % i for i in range(3)]
    aborted = [b"aborted-%d" % i for i in range(3)]
    assert values() == committed
    assert values("read_uncommitted") == [*committed, *aborted, b"open-0", b"plain-after-open"]
    producer.commit_transaction(30)
    everything = [*committed, b"open-0", b"plain-after-open"]
    wait_for(lambda: values() == everything, 60, "the committed transaction's records")


def test_stream_checkpoints_offsets_and_picks_up_new_partitions(
    spark: SparkSession, cluster3: Cluster, tmp_path: Path
) -> None:
    topic = new_topic(cluster3, partitions=1)
    bootstrap = cluster3.bootstrap_servers
    produce(bootstrap, topic, [b"first-%d" % i for i in range(30)], 0)
    stream = (
        spark.readStream.format("kafkalite")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
        .option("maxOffsetsPerTrigger", "10")
        .load()
    )
    query = (
        stream.select("value", "partition", "offset")
        .writeStream.format("memory")
        .queryName(f"q_{topic.replace('-', '_')}")
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    try:
        wait_until_read(query, topic, 30)
        sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
        assert max(sizes) <= 10 and sum(sizes) == 30  # maxOffsetsPerTrigger
        admin = AdminClient({"bootstrap.servers": bootstrap})
        admin.create_partitions([NewPartitions(topic, 3)])[topic].result(30)
        wait_for(
            lambda: len(admin.list_topics(topic).topics[topic].partitions) == 3, 30, "partitions"
        )
        for p in (1, 2):
            produce(bootstrap, topic, [b"new-%d-%d" % (p, i) for i in range(5)], p)
        wait_until_read(query, topic, 40)
        assert source_end(query) == {topic: {"0": 30, "1": 5, "2": 5}}
    finally:
        query.stop()
    table = spark.table(f"q_{topic.replace('-', '_')}").collect()
    assert sorted((r.partition, r.offset) for r in table) == sorted(
        [(0, o) for o in range(30)] + [(p, o) for p in (1, 2) for o in range(5)]
    )
    logged = sorted((tmp_path / "checkpoint" / "offsets").glob("[0-9]*"), key=lambda p: int(p.name))
    last = json.loads(logged[-1].read_text().splitlines()[-1])
    assert last == {topic: {"0": 30, "1": 5, "2": 5}}  # Spark's Kafka source's shape


def test_pattern_subscription_finds_new_topics(
    spark: SparkSession, cluster3: Cluster, tmp_path: Path
) -> None:
    prefix = f"pat-{uuid.uuid4().hex[:6]}"
    bootstrap = cluster3.bootstrap_servers
    query = (
        spark.readStream.format("kafkalite")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribePattern", f"{prefix}-.*")
        .load()
        .writeStream.format("memory")
        .queryName(prefix.replace("-", "_"))
        .option("checkpointLocation", str(tmp_path / "checkpoint"))
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    try:
        wait_for(lambda: query.lastProgress, 60, "the first (empty) micro-batch")
        for name in (f"{prefix}-a", f"{prefix}-b"):
            create_topic(bootstrap, name, 1, 3)
            produce(bootstrap, name, [b"x", b"y"])
        wait_for(
            lambda: sum(sum(v.values()) for v in source_end(query).values()) >= 4,
            60,
            "both topics read",
        )
    finally:
        query.stop()
    assert spark.table(prefix.replace("-", "_")).count() == 4


def test_clear_errors(spark: SparkSession, cluster3: Cluster) -> None:
    topic = new_topic(cluster3, partitions=1)
    produce(cluster3.bootstrap_servers, topic, [b"%d" % i for i in range(10)], 0)

    def read(**options: str) -> int:
        reader = spark.read.format("kafkalite")
        for k, v in {"kafka.bootstrap.servers": cluster3.bootstrap_servers, **options}.items():
            reader = reader.option(k, v)
        return reader.load().count()

    with pytest.raises(Exception, match="kafkalite: unknown topic 'no-such-topic'"):
        read(subscribe="no-such-topic")
    with pytest.raises(Exception, match=f"assigned partitions do not exist: {topic}-7"):
        read(assign=json.dumps({topic: [0, 7]}))
    with pytest.raises(Exception, match=r"no broker of 127\.0\.0\.1:9 .* answered within 3 s"):
        read(
            subscribe=topic,
            **{"kafka.bootstrap.servers": "127.0.0.1:9", "kafkaConsumer.pollTimeoutMs": "3000"},
        )
    with pytest.raises(Exception, match="exactly one of the options"):
        read()
    beyond = json.dumps({topic: {"0": 25}})
    with pytest.raises(Exception, match=r"offset 25 is after the log end 10.*failOnDataLoss"):
        read(subscribe=topic, endingOffsets=beyond)
    assert read(subscribe=topic, endingOffsets=beyond, failOnDataLoss="false") == 10
