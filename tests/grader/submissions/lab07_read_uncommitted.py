# Lab 07, exercise 2, answered with kafka-python's default isolation level
# (read_uncommitted): the auditor reads every record in the log, aborted ones too.
from kafka import TopicPartition


def audit(lab, topic):
    consumer = lab.consumer(consumer_timeout_ms=1500)
    partition = TopicPartition(topic, 0)
    consumer.assign([partition])
    consumer.seek_to_beginning(partition)
    values = [record.value for record in consumer]
    consumer.close()
    return values
