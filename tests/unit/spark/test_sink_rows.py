"""Rows become Kafka records with the columns of Spark's Kafka sink; wrong schemas fail
on the driver with every problem named."""

from __future__ import annotations

import pytest
from pyspark.sql import Row
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from kafkalite.spark.exactly_once import already_written, batch_marker, transactional_id
from kafkalite.spark.sink_rows import KafkaRecord, SinkSchemaError, check_sink_schema, to_record

pytestmark = pytest.mark.unit


HEADERS = ArrayType(
    StructType([StructField("key", StringType()), StructField("value", BinaryType())])
)


def schema(**columns: DataType) -> StructType:
    return StructType([StructField(name, t) for name, t in columns.items()])


def test_accepted_schemas() -> None:
    check_sink_schema(schema(value=StringType()), "out")
    check_sink_schema(
        schema(key=BinaryType(), value=BinaryType(), topic=StringType(), partition=IntegerType()),
        None,
    )
    check_sink_schema(schema(value=StringType(), topic=StringType(), headers=HEADERS), None)


def test_rejected_schemas_name_every_problem() -> None:
    with pytest.raises(SinkSchemaError) as err:
        check_sink_schema(schema(key=IntegerType(), partition=LongType(), word=StringType()), None)
    message = str(err.value)
    assert "'value' column" in message and "'key' must be" in message
    assert (
        "'partition' must be int" in message and "'topic' column or the 'topic' option" in message
    )
    assert "word string" in message  # the columns it got


def test_rows_to_records() -> None:
    row = Row(key="k", value=b"v", topic="t", partition=2, headers=[Row(key="h", value=b"1")])
    assert to_record(row, None) == KafkaRecord("t", 2, b"k", b"v", (("h", b"1"),))
    assert to_record(Row(value="v", topic="t"), "override") == KafkaRecord(
        "override", None, None, b"v"
    )
    with pytest.raises(SinkSchemaError, match="no topic"):
        to_record(Row(value="v", topic=None), None)


def test_exactly_once_names_and_replay_rule() -> None:
    assert transactional_id("q1", 3) == "kafkalite-spark-q1-3"
    records = [KafkaRecord("b", None, None, b"1"), KafkaRecord("a", None, None, b"2")]
    assert batch_marker(records) == "a"
    assert not already_written(-1001, 0)  # nothing committed yet
    assert already_written(5, 4) and not already_written(5, 5)  # batch 4 was the last one
