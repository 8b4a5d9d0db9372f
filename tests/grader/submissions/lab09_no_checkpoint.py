# Lab 09, exercise 1, answered without the query's checkpoint: each start gets a new,
# empty checkpoint directory, so a restarted query remembers nothing it did and reads
# its input from the first record again.
import tempfile


def start_copy(spark, bootstrap, source, output, checkpoint):
    orders = (
        spark.readStream.format("kafkalite")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", source)
        .option("startingOffsets", "earliest")
        .load()
    )
    return (
        orders.select("key", "value", "partition")
        .writeStream.format("kafkalite")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("topic", output)
        .option("deliveryGuarantee", "exactly-once")
        .option("checkpointLocation", tempfile.mkdtemp())
        .trigger(availableNow=True)
        .start()
    )
