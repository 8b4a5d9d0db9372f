# Lab 04, exercise 3, answered with every replica required in sync: nothing acknowledged
# is lost, but one broker down stops every write.


def durable_settings():
    return {"acks": "all"}, {"min.insync.replicas": "3"}
