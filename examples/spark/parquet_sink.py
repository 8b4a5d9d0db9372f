"""Pipeline (a): orders -> Parquet files, read back through Spark.

    python -m examples.spark.parquet_sink --input orders --output /tmp/orders-parquet \\
        --checkpoint /tmp/parquet-checkpoint
    python -m examples.spark.parquet_sink --input orders --output /tmp/orders-parquet \\
        --checkpoint /tmp/parquet-checkpoint --report

Spark's file sink is exactly-once *when read back through Spark*: each micro-batch's
files are listed in ``<output>/_spark_metadata`` only once the batch commits, and
``spark.read.parquet`` reads only listed files. The directory itself may also hold files
of a batch that was being written when the driver died (and will be written again on
restart): counting raw ``part-*`` files would count those twice.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from pyspark.sql import SparkSession
from pyspark.sql.streaming.query import StreamingQuery

import kafkalite.spark
from examples.spark.cli import arguments, query_arguments
from examples.spark.orders import order_stream, parse_orders, run, totals


def start(
    spark: SparkSession,
    bootstrap: str,
    source: str,
    output: str,
    checkpoint: str,
    available_now: bool = False,
    max_per_batch: str | None = None,
) -> StreamingQuery:
    orders = order_stream(spark, bootstrap, source, max_per_batch)
    writer = (
        parse_orders(orders)
        .writeStream.format("parquet")
        .option("path", output)
        .option("checkpointLocation", checkpoint)
    )
    return run(writer, available_now)


def read_back(spark: SparkSession, output: str) -> dict[str, tuple[int, int]]:
    """Per-customer totals of what the sink committed (Spark honours _spark_metadata)."""
    return totals(spark.read.parquet(output))


def main(argv: Sequence[str] | None = None) -> int:
    args = arguments(__doc__ or "", argv, "a directory for the Parquet files")
    spark = kafkalite.spark.session("parquet-sink", master=args.master)
    if args.report:
        for customer, (orders, amount) in sorted(read_back(spark, args.output).items()):
            print(f"{customer}: {orders} orders, {amount} in all")
    else:
        start(spark, *query_arguments(args)).awaitTermination()
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
