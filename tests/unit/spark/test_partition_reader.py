"""The task consumer's settings (:func:`kafkalite.spark.partition_reader.reader_config`)."""

from __future__ import annotations

import pytest

from kafkalite.spark.options import KafkaConnection
from kafkalite.spark.partition_reader import ReadSettings, reader_config

pytestmark = pytest.mark.unit


def settings(**extra: str) -> ReadSettings:
    connection = KafkaConnection("127.0.0.1:9092", extra=tuple(extra.items()))
    return ReadSettings(connection, "read_committed", False, True)


def test_a_kept_consumer_is_not_held_up_by_its_previous_fetch() -> None:
    """librdkafka waits for a held Fetch to return before it sends the next task's first
    one; the reader's Fetches are held 100 ms, not librdkafka's 500 ms."""
    config = reader_config(settings())
    assert config["fetch.wait.max.ms"] == 100
    assert config["isolation.level"] == "read_committed"
    assert config["auto.offset.reset"] == "error"


def test_a_querys_own_kafka_fetch_wait_wins() -> None:
    assert reader_config(settings(**{"fetch.wait.max.ms": "20"}))["fetch.wait.max.ms"] == "20"
