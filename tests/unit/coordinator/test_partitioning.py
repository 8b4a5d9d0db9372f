"""A key's coordinator partition is Kafka's: Java's String.hashCode, over UTF-16 units."""

from __future__ import annotations

import pytest

from kafkalite.coordinator.partitioning import java_string_hash, partition_for

pytestmark = pytest.mark.unit


def test_java_string_hash_is_javas() -> None:
    # values of String.hashCode() in Java
    assert java_string_hash("") == 0
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("polygenelubricants") == -(2**31)  # Integer.MIN_VALUE
    assert java_string_hash("\U0001f600") == 0xD83D * 31 + 0xDE00  # a surrogate pair


def test_partition_for_is_kafkas() -> None:
    """Utils.abs(hash) % partitions, where abs(Integer.MIN_VALUE) is 0."""
    assert partition_for("polygenelubricants", 50) == 0
    assert partition_for("hello", 50) == 99162322 % 50
