"""Lab 09's pipeline: copy a topic to another, partition by partition, with Spark.

    python -m kafkalite.spark.pipeline --bootstrap 127.0.0.1:9092 --source orders \\
        --output orders-copy --checkpoint /tmp/copy-checkpoint [--at-least-once]

Each record keeps its key, value and partition number, so the output holds the input in
the same order and a reader can compare the two record for record. With the exactly-once
sink (the default here) the output has every input record once however often the driver
is killed; ``--at-least-once`` uses Spark's usual Kafka-sink behaviour, which writes a
replayed micro-batch again. Run it under :class:`kafkalite.spark.driver.DriverProcess` to
kill it like a crash.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from kafkalite.spark.session import session

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming.query import StreamingQuery


def copy_topic(
    spark: SparkSession,
    bootstrap: str,
    source: str,
    output: str,
    checkpoint: str,
    delivery: str = "exactly-once",
    available_now: bool = False,
) -> StreamingQuery:
    """Start the copy as a streaming query (a micro-batch every half second)."""
    writer = (
        spark.readStream.format("kafkalite")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .load()
        .select("key", "value", "partition")
        .writeStream.format("kafkalite")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", output)
        .option("deliveryGuarantee", delivery)
        .option("checkpointLocation", checkpoint)
    )
    if available_now:
        return writer.trigger(availableNow=True).start()
    return writer.trigger(processingTime="500 milliseconds").start()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--output", required=True)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--at-least-once", action="store_true")
    parser.add_argument("--available-now", action="store_true")
    args = parser.parse_args(argv)
    started = time.monotonic()
    spark = session("kafkalite-copy")
    print(f"kafkalite-copy: SparkSession after {time.monotonic() - started:.2f} s", flush=True)
    delivery = "at-least-once" if args.at_least_once else "exactly-once"
    query = copy_topic(
        spark, args.bootstrap, args.source, args.output, args.checkpoint, delivery,
        args.available_now,
    )  # fmt: skip
    print(f"kafkalite-copy: query started after {time.monotonic() - started:.2f} s", flush=True)
    query.awaitTermination()
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
