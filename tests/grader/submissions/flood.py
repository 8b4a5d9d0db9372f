def double(x):
    for _ in range(2000):
        print("x" * 65536)
    return 2 * x


def send_all(bootstrap_servers, topic, values):
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap_servers, acks="all")
    for value in values:
        producer.send(topic, value).get(timeout=30)
    producer.close()
