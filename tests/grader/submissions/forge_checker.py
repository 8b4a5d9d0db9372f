# A wrong double() that tries to write its own verdict by patching the history checker
# and the lab's verdict object, at load (a class body runs then) and when it is called.
class Patch:
    import kafkalite.checker.history as history
    import kafkalite.lab.anomalies as anomalies

    history.check = lambda *args, **kwargs: None
    anomalies.CheckResult.valid = property(lambda self: True)
    anomalies.CheckResult.counts = property(lambda self: {"lost": 0, "duplicated": 0})


def double(x):
    Patch()
    return 2 * abs(x)  # wrong for negative numbers


def send_all(bootstrap_servers, topic, values):
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap_servers, acks="all")
    for value in values[:-1]:  # the last value is never sent
        producer.send(topic, value).get(timeout=30)
    producer.close()
