"""Pipeline (b): per-customer totals of each micro-batch, written idempotently per batch id.

    python -m examples.spark.foreach_batch --input orders --output /tmp/order-totals \\
        --checkpoint /tmp/foreach-checkpoint

``foreachBatch`` hands each micro-batch to ordinary code, which Spark may run again for
the same batch after a crash (at-least-once). Exactly-once comes from writing it
*idempotently*: the batch's result goes to a file named by its batch id, written to a
temporary file and renamed into place, so a replayed batch replaces its earlier result
(the same rows, hence the same totals) instead of adding to it.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.streaming.query import StreamingQuery

import kafkalite.spark
from examples.spark.cli import arguments, query_arguments
from examples.spark.orders import order_stream, parse_orders, run, totals


class BatchTotalsWriter:
    """``foreachBatch`` function: ``<output>/batch-<id>.json`` per micro-batch."""

    def __init__(self, output: str) -> None:
        self.output = Path(output)
        self.output.mkdir(parents=True, exist_ok=True)

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        result = {"batch_id": batch_id, "totals": totals(batch)}
        fd, temporary = tempfile.mkstemp(dir=self.output, prefix=".tmp-")
        with os.fdopen(fd, "w") as file:
            json.dump(result, file)
        os.replace(temporary, self.output / f"batch-{batch_id:08d}.json")


def read_totals(output: str) -> dict[str, tuple[int, int]]:
    """customer -> (orders, amount), summed over every batch's file."""
    counts: Counter[str] = Counter()
    amounts: Counter[str] = Counter()
    for path in sorted(Path(output).glob("batch-*.json")):
        for customer, (n, amount) in json.loads(path.read_text())["totals"].items():
            counts[customer] += n
            amounts[customer] += amount
    return {c: (counts[c], amounts[c]) for c in counts}


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
        .writeStream.foreachBatch(BatchTotalsWriter(output))
        .option("checkpointLocation", checkpoint)
    )
    return run(writer, available_now)


def main(argv: Sequence[str] | None = None) -> int:
    args = arguments(__doc__ or "", argv, "a directory for each batch's totals")
    if not args.report:
        spark = kafkalite.spark.session("foreach-batch", master=args.master)
        start(spark, *query_arguments(args)).awaitTermination()
        spark.stop()
    for customer, (orders, amount) in sorted(read_totals(args.output).items()):
        print(f"{customer}: {orders} orders, {amount} in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
