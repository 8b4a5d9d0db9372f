"""``format("kafkalite")``: the data source Spark instantiates with the query's options.

Spark creates it in several Python processes (to get the schema, to plan, to write), so
it only parses options; the readers and writers do the work.
"""

from __future__ import annotations

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)
from pyspark.sql.types import StructType

from kafkalite.spark.exactly_once import ExactlyOnceStreamWriter
from kafkalite.spark.options import parse_sink_options, parse_source_options
from kafkalite.spark.partition_reader import spark_schema
from kafkalite.spark.sink import KafkaLiteBatchWriter, KafkaLiteStreamWriter
from kafkalite.spark.sink_rows import check_sink_schema
from kafkalite.spark.source import KafkaLiteBatchReader, KafkaLiteStreamReader


class KafkaLiteDataSource(DataSource):
    """Spark's Kafka connector's options and columns, for Kafka-Lite (or any Kafka)."""

    @classmethod
    def name(cls) -> str:
        return "kafkalite"

    def schema(self) -> str:
        include = str(self.options.get("includeHeaders", "false")).strip().lower() == "true"
        return spark_schema(include)

    def reader(self, schema: StructType) -> DataSourceReader:
        return KafkaLiteBatchReader(parse_source_options(self.options, streaming=False))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        return KafkaLiteStreamReader(parse_source_options(self.options, streaming=True))

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        options = parse_sink_options(self.options, streaming=False)
        check_sink_schema(schema, options.topic)
        return KafkaLiteBatchWriter(options)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        options = parse_sink_options(self.options, streaming=True)
        check_sink_schema(schema, options.topic)
        if options.delivery == "exactly-once":
            return ExactlyOnceStreamWriter(options)
        return KafkaLiteStreamWriter(options)
