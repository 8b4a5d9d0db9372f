"""A Python data source with no Kafka behind it, for the class archive's build to stream
through (:mod:`kafkalite.spark.class_archive`).

The archive holds the classes its building JVM loaded. A restarted pipeline's first
micro-batch runs Spark's JVM side of a Python streaming source and sink (the planner and
source runners, Arrow vectors both ways, the Python stream write and its commit); when
the build ran only built-in queries, ~1,000 of those classes were still read from the
jars at every restart (``-Xlog:class+load``). This source and sink take the same JVM paths
as ``format("kafkalite")``: admission control, Arrow batches, a committed stream write,
without needing a cluster while ``make setup`` runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

ROWS_PER_BATCH = 100


class CountingSource(DataSource):
    """``format("kafkalite-class-archive")``: a stream of counters, written nowhere."""

    @classmethod
    def name(cls) -> str:
        return "kafkalite-class-archive"

    def schema(self) -> str:
        return "key binary, value binary, partition int"

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return CountingReader()

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        return DiscardingWriter()


class CountingReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Like the Kafka source: admission control and Trigger.AvailableNow."""

    def prepareForTriggerAvailableNow(self) -> None:
        """Every batch has rows: there is no end to find."""

    def initialOffset(self) -> dict[str, Any]:
        return {"offset": 0}

    def getDefaultReadLimit(self) -> ReadLimit:
        return ReadAllAvailable()

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, Any]:
        return {"offset": int(start["offset"]) + ROWS_PER_BATCH}

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> list[InputPartition]:
        return [InputPartition((int(start["offset"]), int(end["offset"])))]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        first, end = partition.value
        values = [str(i).encode() for i in range(first, end)]
        yield pa.RecordBatch.from_arrays(
            [pa.array(values), pa.array(values), pa.array([0] * len(values), pa.int32())],
            names=["key", "value", "partition"],
        )


class DiscardingWriter(DataSourceStreamWriter):
    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        for _ in iterator:
            pass
        return WriterCommitMessage()

    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Nothing to commit: the rows went nowhere."""

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        """Nothing to undo."""
