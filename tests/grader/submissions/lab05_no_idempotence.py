# Lab 05, exercise 1, answered with acks="all" and retries but without idempotence: a
# retry after a lost acknowledgement is a new write to the broker.


def payment_producer():
    return {"acks": "all", "retries": 5, "enable_idempotence": False}
