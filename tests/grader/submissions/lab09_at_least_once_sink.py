# Lab 09, exercise 1, answered with the kafkalite sink's default delivery (at least once):
# a driver killed in the middle of a batch replays the batch, and the copy holds it twice.


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
        .option("checkpointLocation", checkpoint)
        .trigger(availableNow=True)
        .start()
    )
