# Lab 05, exercise 1, answered with acks="all" (and the producer's retries) but without
# idempotence: a retry after a lost acknowledgement is a new write to the broker.


def payment_producer():
    return {"acks": "all", "enable_idempotence": False}
