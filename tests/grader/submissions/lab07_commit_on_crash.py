# Lab 07, exercise 1, answered by committing what was sent when the program "crashes":
# the debit becomes visible without its credit.


def transfer(producer, topic, source, target, amount, crash=False):
    producer.begin_transaction()
    producer.send(topic, f"{source}:-{amount}".encode(), key=source.encode())
    if crash:
        producer.flush()
        producer.commit_transaction()
        return False
    producer.send(topic, f"{target}:+{amount}".encode(), key=target.encode())
    producer.commit_transaction()
    return True
