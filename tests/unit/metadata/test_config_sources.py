"""Where a setting's value comes from, in Kafka's order of precedence (DescribeConfigs)."""

from __future__ import annotations

import pytest

from kafkalite.metadata.config_sources import (
    ConfigSource,
    describe_broker,
    describe_cluster_defaults,
    describe_group,
    describe_topic,
)
from kafkalite.metadata.image import MetadataImage
from kafkalite.metadata.records import ConfigRecord, TopicRecord

pytestmark = pytest.mark.unit


def image_with(*records: ConfigRecord | TopicRecord) -> MetadataImage:
    image = MetadataImage()
    for offset, record in enumerate(records):
        image.replay(record, offset)
    return image


def by_name(described: list) -> dict:
    return {c.name: c for c in described}


def test_a_broker_setting_is_per_broker_then_cluster_wide_then_start_up_then_default() -> None:
    static = {"log.retention.ms": "1000", "advertised.listeners": "PLAINTEXT://h:1"}
    image = image_with(ConfigRecord("broker", "", "log.retention.ms", "2000"))
    configs = by_name(describe_broker(image, 1, static))
    retention = configs["log.retention.ms"]
    assert (retention.value, retention.source) == (
        "2000",
        ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
    )
    assert [(s.value, s.source) for s in retention.synonyms] == [
        ("2000", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),
        ("1000", ConfigSource.STATIC_BROKER_CONFIG),
        ("604800000", ConfigSource.DEFAULT_CONFIG),
    ]
    assert configs["advertised.listeners"].source == ConfigSource.STATIC_BROKER_CONFIG
    assert configs["log.segment.bytes"].is_default
    image.replay(ConfigRecord("broker", "1", "log.retention.ms", "3000"), 9)
    retention = by_name(describe_broker(image, 1, static))["log.retention.ms"]
    assert (retention.value, retention.source) == ("3000", ConfigSource.DYNAMIC_BROKER_CONFIG)
    assert [c.name for c in describe_cluster_defaults(image)] == ["log.retention.ms"]


def test_a_topic_setting_is_its_override_or_its_broker_synonym() -> None:
    image = image_with(
        TopicRecord("t", "id-t"),
        ConfigRecord("topic", "t", "retention.ms", "5"),
        ConfigRecord("broker", "", "log.segment.bytes", "2048"),
    )
    configs = by_name(describe_topic(image, "t", 1, {}))
    assert (configs["retention.ms"].value, configs["retention.ms"].source) == (
        "5",
        ConfigSource.DYNAMIC_TOPIC_CONFIG,
    )
    segment = configs["segment.bytes"]
    assert (segment.value, segment.source) == ("2048", ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG)
    assert segment.synonyms[0].name == "log.segment.bytes"


def test_a_group_setting_is_its_own_or_the_default() -> None:
    image = image_with(ConfigRecord("group", "g", "consumer.session.timeout.ms", "50000"))
    configs = by_name(describe_group(image, "g"))
    assert configs["consumer.session.timeout.ms"].source == ConfigSource.GROUP_CONFIG
    assert configs["consumer.heartbeat.interval.ms"].is_default
