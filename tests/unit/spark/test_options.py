"""Spark's Kafka options parse as Spark's connector reads them, and bad ones fail in one line."""

from __future__ import annotations

import pytest

from kafkalite.spark.offsets import EARLIEST, LATEST
from kafkalite.spark.options import OptionError, parse_sink_options, parse_source_options

pytestmark = pytest.mark.unit

BASE = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


def source(streaming: bool = True, **options: str):
    return parse_source_options({**BASE, **options}, streaming=streaming)


def test_defaults_follow_spark_except_read_committed() -> None:
    stream = source(subscribe="orders")
    assert stream.starting.kind == "latest" and stream.isolation == "read_committed"
    assert stream.fail_on_data_loss and not stream.include_headers
    assert stream.max_offsets_per_trigger is None and stream.min_partitions is None
    batch = source(streaming=False, subscribe="orders")
    assert (batch.starting.kind, batch.ending.kind) == ("earliest", "latest")


def test_option_names_are_case_insensitive_and_kafka_settings_pass_through() -> None:
    opts = source(
        SUBSCRIBE="a, b",
        maxoffsetspertrigger="100",
        **{"kafka.Isolation.Level": "read_uncommitted", "kafka.fetch.wait.max.ms": "50"},
    )
    assert opts.subscription.topics == ("a", "b")
    assert opts.max_offsets_per_trigger == 100 and opts.isolation == "read_uncommitted"
    assert dict(opts.connection.extra) == {"fetch.wait.max.ms": "50"}


def test_exactly_one_subscription_kind() -> None:
    with pytest.raises(OptionError, match="exactly one of"):
        source()
    with pytest.raises(OptionError, match=r"got subscribe, subscribepattern"):
        source(subscribe="a", subscribePattern="a.*")


def test_assign_and_pattern() -> None:
    assigned = source(assign='{"b":[1,0],"a":[2]}').subscription
    assert assigned.partitions == (("a", 2), ("b", 0), ("b", 1))
    assert assigned.matches("b") and not assigned.matches("c")
    pattern = source(subscribePattern="ord.*").subscription
    assert pattern.matches("orders") and not pattern.matches("xorders")
    with pytest.raises(OptionError, match="topicA"):
        source(assign='{"a": 1}')
    with pytest.raises(OptionError, match="no regex"):
        source(subscribePattern="(")


def test_offsets_json_with_spark_sentinels() -> None:
    spec = source(subscribe="a", startingOffsets='{"a":{"0":23,"1":-2,"2":-1}}').starting
    assert spec.kind == "offsets"
    assert [spec.for_partition(("a", p)) for p in range(3)] == [23, EARLIEST, LATEST]
    with pytest.raises(OptionError, match="not allowed"):  # batch reads cannot start at latest
        source(streaming=False, subscribe="a", startingOffsets='{"a":{"0":-1}}')
    with pytest.raises(OptionError, match="not allowed"):  # ...nor end at earliest
        source(streaming=False, subscribe="a", endingOffsets='{"a":{"0":-2}}')
    with pytest.raises(OptionError, match="not valid JSON"):
        source(subscribe="a", startingOffsets="{a:1}")


def test_timestamps_win_over_offsets() -> None:
    opts = source(
        subscribe="a",
        startingOffsets="earliest",
        startingOffsetsByTimestamp='{"a":{"0":1000}}',
        startingTimestamp="2000",
    )
    assert (opts.starting.kind, opts.starting.timestamp_ms) == ("timestamp", 2000)
    per_partition = source(subscribe="a", startingOffsetsByTimestamp='{"a":{"0":1000}}')
    assert per_partition.starting.offsets == {("a", 0): 1000}


def test_errors_name_the_option() -> None:
    with pytest.raises(OptionError, match=r"kafka\.bootstrap\.servers"):
        parse_source_options({"subscribe": "a"}, streaming=True)
    with pytest.raises(OptionError, match="'maxoffsetspertrigger' must be positive"):
        source(subscribe="a", maxOffsetsPerTrigger="0")
    with pytest.raises(OptionError, match="failondataloss"):
        source(subscribe="a", failOnDataLoss="maybe")
    with pytest.raises(OptionError, match=r"kafka\.isolation\.level"):
        source(subscribe="a", **{"kafka.isolation.level": "serializable"})
    with pytest.raises(OptionError, match="batch queries only"):
        source(subscribe="a", endingOffsets="latest")
    with pytest.raises(OptionError, match="streaming queries only"):
        source(streaming=False, subscribe="a", maxOffsetsPerTrigger="5")
    with pytest.raises(OptionError, match="minOffsetsPerTrigger"):
        source(subscribe="a", minOffsetsPerTrigger="5")


def test_sink_options() -> None:
    sink = parse_sink_options({**BASE, "topic": "out"}, streaming=True)
    assert (sink.topic, sink.delivery) == ("out", "at-least-once")
    eos = parse_sink_options({**BASE, "deliveryGuarantee": "exactly-once"}, streaming=True)
    assert eos.delivery == "exactly-once" and eos.topic is None
    with pytest.raises(OptionError, match="needs a streaming query"):
        parse_sink_options({**BASE, "deliveryGuarantee": "exactly-once"}, streaming=False)
    with pytest.raises(OptionError, match="deliveryGuarantee"):
        parse_sink_options({**BASE, "deliveryGuarantee": "twice"}, streaming=True)
