"""Pipeline (c): orders -> enriched orders on a second topic, exactly once.

    python -m examples.spark.exactly_once_topic --bootstrap 127.0.0.1:9092 \\
        --input orders --output orders-enriched --checkpoint /tmp/eos-checkpoint

Each output record is an order plus where it came from (``source_partition``,
``source_offset``), written to the same partition number it was read from, so a
read_committed reader of the output sees the input in order, each record once, however
often the driver is killed and restarted from the checkpoint. Kill it (Ctrl-C, or
``kill -9``) and run it again: it goes on where its last micro-batch ended, and a batch
that was being written when it died is recognised and not written twice.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.query import StreamingQuery

import kafkalite.spark
from examples.spark.cli import arguments, query_arguments
from examples.spark.orders import order_stream, parse_orders, run


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
    enriched = parse_orders(orders).select(
        F.col("customer").alias("key"),
        F.to_json(
            F.struct(
                "order_id",
                "customer",
                "amount",
                F.col("partition").alias("source_partition"),
                F.col("offset").alias("source_offset"),
            )
        ).alias("value"),
        "partition",
    )
    writer = (
        enriched.writeStream.format("kafkalite")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", output)
        .option("deliveryGuarantee", "exactly-once")
        .option("checkpointLocation", checkpoint)
    )
    return run(writer, available_now)


def main(argv: Sequence[str] | None = None) -> int:
    args = arguments(__doc__ or "", argv, "the topic of enriched orders (as many partitions)")
    spark = kafkalite.spark.session("exactly-once-topic", master=args.master)
    query = start(spark, *query_arguments(args))
    query.awaitTermination()
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
