# Lab 01, exercise 3, answered by subscribing to the whole topic: every partition's
# records, not the one asked for.
from kafka import TopicPartition


def read_partition(lab, topic, partition, start):
    consumer = lab.consumer(consumer_timeout_ms=2000)
    consumer.subscribe([topic])
    values = [record.value for record in consumer if record.offset >= start]
    consumer.close()
    return values
