# Lab 01, exercise 2, answered from the beginning of the partition whatever start says
# (and iterating, which stops after 5 s without a record: a hung leader is longer).
from kafka import TopicPartition


def read_partition(lab, topic, partition, start):
    consumer = lab.consumer()
    tp = TopicPartition(topic, partition)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    end = consumer.end_offsets([tp])[tp]
    values = []
    for record in consumer if end > 0 else []:
        values.append(record.value)
        if record.offset + 1 >= end:
            break
    consumer.close()
    return values
