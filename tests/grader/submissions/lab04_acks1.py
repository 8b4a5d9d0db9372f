# Lab 04, exercise 3, answered with the settings of section 2: the leader acknowledges
# a write as soon as it has it, and a leader alone is in sync enough.


def durable_settings():
    return {"acks": 1}, {"min.insync.replicas": "1"}
