def double(x):
    return 2 * abs(x)  # wrong for negative numbers


def send_all(bootstrap_servers, topic, values):
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap_servers, acks="all")
    for value in values[:-1]:  # an off-by-one: the last value is never sent
        producer.send(topic, value).get(timeout=30)
    producer.close()
