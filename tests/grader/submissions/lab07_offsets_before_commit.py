# Lab 07, exercise 3, answered with the consumer's offsets committed on their own, before
# the transaction of the invoices commits: a crash between the two loses the batch.
from kafka import TopicPartition
from kafka.structs import OffsetAndMetadata


def bill(consumer, producer, records, invoices):
    producer.begin_transaction()
    for record in records:
        producer.send(invoices, b"invoice:" + record.value)
    last = records[-1]
    offsets = {
        TopicPartition(last.topic, last.partition): OffsetAndMetadata(last.offset + 1, "", -1)
    }
    consumer.commit(offsets)
    producer.commit_transaction()
