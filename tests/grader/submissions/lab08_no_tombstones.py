# Lab 08, exercise 4, answered without tombstones: a deleted key keeps its last value.
import json

from kafka import TopicPartition


def bootstrap(lab, topic):
    consumer = lab.consumer(consumer_timeout_ms=5000)
    partition = TopicPartition(topic, 0)
    consumer.assign([partition])
    consumer.seek_to_beginning(partition)
    end = consumer.end_offsets([partition])[partition]
    data = {}
    while consumer.position(partition) < end:
        for record in consumer.poll(1000).get(partition, []):
            if record.offset >= end:
                break
            if record.value is not None:
                data[record.key.decode()] = json.loads(record.value)
    consumer.close()
    return data, end
