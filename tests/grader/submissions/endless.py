def double(x):
    while True:
        pass


def send_all(bootstrap_servers, topic, values):
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap_servers, acks="all")
    for value in values:
        producer.send(topic, value).get(timeout=30)
    producer.close()
