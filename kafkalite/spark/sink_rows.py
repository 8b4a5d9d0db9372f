"""From a DataFrame row to a Kafka record, with the columns of Spark's Kafka sink.

``value`` (string or binary) is required; ``key`` (string or binary), ``topic`` (string:
required unless the ``topic`` option is set, which then wins over the column),
``partition`` (int: else the producer's partitioner picks by key) and ``headers``
(array of struct<key string, value binary>) are optional. Other columns are not written.
The schema is checked on the driver, when the query starts, so a wrong column is one
clear error and not a failed task.

Pure: no Kafka client here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    IntegerType,
    StringType,
    StructType,
)


class SinkSchemaError(ValueError):
    """The DataFrame cannot be written to Kafka as it is."""


@dataclass(frozen=True, slots=True)
class KafkaRecord:
    topic: str
    partition: int | None
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()


def _is_text_or_bytes(t: DataType) -> bool:
    return isinstance(t, StringType | BinaryType)


def _is_headers(t: DataType) -> bool:
    if not isinstance(t, ArrayType) or not isinstance(t.elementType, StructType):
        return False
    fields = {f.name: f.dataType for f in t.elementType.fields}
    return (
        set(fields) == {"key", "value"}
        and isinstance(fields["key"], StringType)
        and isinstance(fields["value"], BinaryType | StringType)
    )


def check_sink_schema(schema: StructType, topic_option: str | None) -> None:
    """Spark's rules for its Kafka sink's input, as one error naming every problem."""
    types = {f.name: f.dataType for f in schema.fields}
    problems = []
    if "value" not in types:
        problems.append("a 'value' column (string or binary) is required")
    elif not _is_text_or_bytes(types["value"]):
        problems.append(f"'value' must be string or binary, not {types['value'].simpleString()}")
    if "key" in types and not _is_text_or_bytes(types["key"]):
        problems.append(f"'key' must be string or binary, not {types['key'].simpleString()}")
    if "topic" in types and not isinstance(types["topic"], StringType):
        problems.append(f"'topic' must be a string, not {types['topic'].simpleString()}")
    if "topic" not in types and not topic_option:
        problems.append("a 'topic' column or the 'topic' option is required")
    if "partition" in types and not isinstance(types["partition"], IntegerType):
        problems.append(f"'partition' must be int, not {types['partition'].simpleString()}")
    if "headers" in types and not _is_headers(types["headers"]):
        problems.append("'headers' must be array<struct<key: string, value: binary>>")
    if problems:
        columns = ", ".join(f"{n} {t.simpleString()}" for n, t in types.items())
        raise SinkSchemaError(f"kafkalite sink: {'; '.join(problems)} (columns: {columns})")


def _bytes(value: Any) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.encode()
    return bytes(value)


def to_record(row: Any, topic_option: str | None) -> KafkaRecord:
    """One row (a ``pyspark.sql.Row``, or anything with the columns as attributes/keys)."""
    fields = row.asDict() if hasattr(row, "asDict") else dict(row)
    topic = topic_option or fields.get("topic")
    if not topic:
        raise SinkSchemaError(f"kafkalite sink: a row has no topic (topic column is null): {row}")
    headers = tuple(
        (h["key"], _bytes(h["value"])) for h in (fields.get("headers") or ()) if h is not None
    )
    return KafkaRecord(
        topic=topic,
        partition=fields.get("partition"),
        key=_bytes(fields.get("key")),
        value=_bytes(fields.get("value")),
        headers=headers,
    )
