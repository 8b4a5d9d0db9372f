"""The lab's data for the Spark pipelines: orders keyed by customer.

An order is a JSON value ``{"order_id": 17, "customer": "c3", "amount": 42}`` with the
customer as its key, so one customer's orders share a partition. The pipelines compute
per-customer aggregates (orders and total amount); ``expected_totals`` is the answer
computed from the orders themselves, to compare any pipeline's output with.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable

from confluent_kafka import Producer
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.query import StreamingQuery
from pyspark.sql.streaming.readwriter import DataStreamWriter

CUSTOMERS = 7
ORDER_SCHEMA = "order_id long, customer string, amount long"


def order(order_id: int) -> tuple[bytes, bytes]:
    """Key and value of order ``order_id`` (deterministic: tests recompute it)."""
    customer = f"c{order_id % CUSTOMERS}"
    amount = 1 + order_id * 7919 % 100
    value = {"order_id": order_id, "customer": customer, "amount": amount}
    return customer.encode(), json.dumps(value).encode()


def produce_orders(bootstrap: str, topic: str, order_ids: Iterable[int]) -> int:
    """Write orders with an idempotent acks=all producer; returns how many were acked."""
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
    acked = 0

    def on_delivery(error: object, _message: object) -> None:
        nonlocal acked
        acked += error is None

    for order_id in order_ids:
        key, value = order(order_id)
        producer.produce(topic, value, key=key, on_delivery=on_delivery)
        producer.poll(0)
    producer.flush(60)
    return acked


def expected_totals(order_ids: Iterable[int]) -> dict[str, tuple[int, int]]:
    """customer -> (orders, total amount), computed without Spark."""
    counts: Counter[str] = Counter()
    amounts: Counter[str] = Counter()
    for order_id in order_ids:
        value = json.loads(order(order_id)[1])
        counts[value["customer"]] += 1
        amounts[value["customer"]] += value["amount"]
    return {c: (counts[c], amounts[c]) for c in counts}


def parse_orders(kafka_rows: DataFrame) -> DataFrame:
    """The source's rows (key, value, partition, offset, ...) as order columns, keeping
    where each came from."""
    parsed: Column = F.from_json(F.col("value").cast("string"), ORDER_SCHEMA)
    return kafka_rows.select(parsed.alias("o"), "partition", "offset").select(
        "o.*", "partition", "offset"
    )


def totals(orders: DataFrame) -> dict[str, tuple[int, int]]:
    """customer -> (orders, total amount) of a DataFrame of orders."""
    rows = orders.groupBy("customer").agg(F.count("*").alias("n"), F.sum("amount").alias("s"))
    return {r["customer"]: (r["n"], r["s"]) for r in rows.collect()}


def order_stream(
    spark: SparkSession, bootstrap: str, topic: str, max_per_batch: str | None = None
) -> DataFrame:
    """The topic of orders as a stream, from its first record (Spark's Kafka options)."""
    reader = (
        spark.readStream.format("kafkalite")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
    )
    if max_per_batch:
        reader = reader.option("maxOffsetsPerTrigger", max_per_batch)
    return reader.load()


def run(writer: DataStreamWriter, available_now: bool) -> StreamingQuery:
    """Start the query: a micro-batch every half second, or (``available_now``) the
    records there now and stop."""
    if available_now:
        return writer.trigger(availableNow=True).start()
    return writer.trigger(processingTime="500 milliseconds").start()
