"""Lab 04's steps (leader failover) as a script, run inside a lab container until the lab's
notebook exists: connect as a notebook does, write acks=all with kafka-python (the
students' client), kill the partition's leader, watch another replica lead, keep writing,
bring the old leader back, and read everything back. Prints a JSON report.

The same script runs in the course stack's lab container (``connect()`` gives the Docker
backend: the brokers are containers) and in a JupyterHub student's container (the local
backend: the brokers are processes inside it).
"""

from __future__ import annotations

import json
import os

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient, NewTopic

import kafkalite.lab

TOPIC = "lab04-failover"
RECORDS = 50


def main() -> None:
    lab = kafkalite.lab.connect()
    admin = KafkaAdminClient(bootstrap_servers=lab.bootstrap_servers)
    admin.create_topics([NewTopic(TOPIC, 1, 3, topic_configs={"min.insync.replicas": "2"})])
    admin.close()
    lab.wait_for(lambda: lab.leader(TOPIC, 0), 30, "a leader of the new topic")
    producer = KafkaProducer(bootstrap_servers=lab.bootstrap_servers, acks="all", retries=20)
    acked = [producer.send(TOPIC, f"before-{i}".encode()).get(30).offset for i in range(RECORDS)]

    old = lab.leader(TOPIC, 0)
    assert old is not None
    lab.kill(old)
    new = lab.wait_for(
        lambda: (leader := lab.leader(TOPIC, 0)) not in (None, old) and leader,
        30,
        "another replica leading partition 0",
    )
    acked += [producer.send(TOPIC, f"after-{i}".encode()).get(60).offset for i in range(RECORDS)]
    producer.close()
    lab.start(old)
    lab.reset()  # every replica back in sync

    consumer = KafkaConsumer(bootstrap_servers=lab.bootstrap_servers, enable_auto_commit=False)
    partition = TopicPartition(TOPIC, 0)
    consumer.assign([partition])
    consumer.seek_to_beginning(partition)
    values: list[bytes] = []
    while len(values) < 2 * RECORDS:
        batch = consumer.poll(timeout_ms=5000)
        if not batch:
            break
        values += [r.value for records in batch.values() for r in records]
    consumer.close()
    expected = {f"{when}-{i}".encode() for when in ("before", "after") for i in range(RECORDS)}
    print(
        json.dumps(
            {
                "backend": os.environ.get("KAFKALITE_BACKEND", "local"),
                "bootstrap": lab.bootstrap_servers,
                "old_leader": old,
                "new_leader": new,
                "acked": len(acked),
                "missing": sorted(v.decode() for v in expected - set(values)),
                "states": {str(b): s.value for b, s in lab.cluster.broker_states().items()},
            }
        )
    )


if __name__ == "__main__":
    main()
