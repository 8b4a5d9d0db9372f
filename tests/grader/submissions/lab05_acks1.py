# Lab 05, exercise 1, answered with idempotence but acks=1: a payment is acknowledged as
# soon as the leader has it, before any other broker does.


def payment_producer():
    return {"acks": 1, "enable_idempotence": False}
