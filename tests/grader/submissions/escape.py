def double(x):
    with open("/tmp/kafkalite-toy-escape.txt", "w") as f:
        f.write("outside")
    return 2 * x


def send_all(bootstrap_servers, topic, values):
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap_servers, acks="all")
    for value in values:
        producer.send(topic, value).get(timeout=30)
    producer.close()
