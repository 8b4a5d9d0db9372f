"""A toy lab for the grader's own tests: one pure exercise and one that must survive a
leader being killed, in otter-grader's master format. Real labs live in grader/masters/."""

from __future__ import annotations

from pathlib import Path

import nbformat

CONFIG = """# ASSIGNMENT CONFIG
name: toy
tests:
  ok_format: false
  files: true
init_cell: false
check_all_cell: false
export_cell: false
generate: false
run_tests: false"""

SEND_ALL_TEST = '''""" # BEGIN TEST CONFIG
hidden: true
points: 3
""" # END TEST CONFIG
def test_nothing_acknowledged_is_lost_when_the_leader_dies(send_all, cluster, bootstrap_servers):
    import uuid
    from kafka import KafkaConsumer
    from kafka.admin import KafkaAdminClient, NewTopic
    topic = f"toy-{uuid.uuid4().hex[:8]}"
    admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers)
    admin.create_topics([NewTopic(topic, 1, 3, topic_configs={"min.insync.replicas": "2"})])
    admin.close()
    import time
    deadline, leader = time.monotonic() + 10, None
    while leader is None and time.monotonic() < deadline:
        time.sleep(0.05)
        leader = next((p["leader"] for p in cluster.status()["partitions"]
                       if p["topic"] == topic), None)
    cluster.kill(leader)
    values = [f"v{i}".encode() for i in range(50)]
    send_all(bootstrap_servers, topic, values)
    consumer = KafkaConsumer(topic, bootstrap_servers=bootstrap_servers,
                             auto_offset_reset="earliest", consumer_timeout_ms=3000)
    read = [record.value for record in consumer]
    consumer.close()
    lost = [v for v in values if v not in read]
    assert not lost, f"lost {len(lost)} acknowledged records, e.g. {lost[:3]}"'''


def build(path: Path) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    raw, md, code = (
        nbformat.v4.new_raw_cell,
        nbformat.v4.new_markdown_cell,
        nbformat.v4.new_code_cell,
    )
    nb.cells = [
        raw(CONFIG),
        md("# A toy lab"),
        raw("# BEGIN QUESTION\nname: q1\npoints: 3"),
        md("Write `double(x)`."),
        raw("# BEGIN SOLUTION"),
        code("def double(x):\n    # BEGIN SOLUTION\n    return 2 * x\n    # END SOLUTION"),
        raw("# END SOLUTION"),
        raw("# BEGIN TESTS"),
        code(
            '""" # BEGIN TEST CONFIG\npoints: 1\n""" # END TEST CONFIG\n'
            "def test_two(double):\n    assert double(2) == 4"
        ),
        code(
            '""" # BEGIN TEST CONFIG\nhidden: true\npoints: 2\n""" # END TEST CONFIG\n'
            "def test_negative(double):\n    assert double(-3) == -6, 'double(-3) should be -6'"
        ),
        raw("# END TESTS"),
        raw("# END QUESTION"),
        raw("# BEGIN QUESTION\nname: q2\npoints: 3"),
        md("Write `send_all(bootstrap_servers, topic, values)`: every value acknowledged."),
        raw("# BEGIN SOLUTION"),
        code(
            "def send_all(bootstrap_servers, topic, values):\n    # BEGIN SOLUTION\n"
            "    from kafka import KafkaProducer\n"
            "    producer = KafkaProducer(bootstrap_servers=bootstrap_servers, acks='all')\n"
            "    for value in values:\n        producer.send(topic, value).get(timeout=30)\n"
            "    producer.close()\n    # END SOLUTION"
        ),
        raw("# END SOLUTION"),
        raw("# BEGIN TESTS"),
        code(SEND_ALL_TEST),
        raw("# END TESTS"),
        raw("# END QUESTION"),
    ]
    nbformat.write(nb, path)
    return path
