# Lab 01, exercise 1, answered with the offset after the record (the next one to write).


def send_and_locate(producer, topic, key, value):
    metadata = producer.send(topic, value, key=key).get(timeout=10)
    return metadata.partition, metadata.offset + 1
