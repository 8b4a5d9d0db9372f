# Lab 07, exercise 3, answered with the consumer's offsets committed on their own, after
# the transaction of the invoices commits: a crash between the two bills the batch twice.
from kafka import TopicPartition
from kafka.structs import OffsetAndMetadata


def bill(consumer, producer, records, invoices):
    producer.begin_transaction()
    for record in records:
        producer.send(invoices, b"invoice:" + record.value)
    producer.commit_transaction()
    last = records[-1]
    offsets = {
        TopicPartition(last.topic, last.partition): OffsetAndMetadata(last.offset + 1, "", -1)
    }
    consumer.commit(offsets)
