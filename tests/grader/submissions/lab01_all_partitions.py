# Lab 01, exercise 2, answered by subscribing to the whole topic: every partition's
# records, not the one asked for (and iterating stops after 2 s without a record).
from kafka import TopicPartition


def read_partition(lab, topic, partition, start):
    consumer = lab.consumer(consumer_timeout_ms=2000)
    consumer.subscribe([topic])
    values = [record.value for record in consumer if record.offset >= start]
    consumer.close()
    return values
