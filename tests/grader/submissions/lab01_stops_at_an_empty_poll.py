# Lab 01, exercise 2, answered with a loop that stops at the first poll that returns
# nothing, as if that were the end of the partition: during a leader election it is not.
from kafka import TopicPartition


def read_partition(lab, topic, partition, start):
    consumer = lab.consumer()
    tp = TopicPartition(topic, partition)
    consumer.assign([tp])
    consumer.seek(tp, start)
    end = consumer.end_offsets([tp])[tp]
    values = []
    while records := consumer.poll(timeout_ms=2000).get(tp, []):
        values.extend(record.value for record in records if record.offset < end)
    consumer.close()
    return values
