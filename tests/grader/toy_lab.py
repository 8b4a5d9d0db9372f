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
def test_nothing_acknowledged_is_lost_when_the_leader_dies(student, lab):
    import uuid

    def send(send_all, bootstrap_servers, topic, values):
        send_all(bootstrap_servers, topic, [v.encode() for v in values])

    topic = f"toy-{uuid.uuid4().hex[:8]}"
    lab.create_topic(topic, 1, 3, configs={"min.insync.replicas": "2"})
    lab.kill(lab.leader(topic))
    values = [f"v{i}" for i in range(50)]
    student.run(send, topic=topic, values=values)
    consumer = lab.consumer(consumer_timeout_ms=3000)
    consumer.subscribe([topic])
    read = [record.value.decode() for record in consumer]
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
            "def test_two(student):\n    assert student.call('double', 2) == 4"
        ),
        code(
            '""" # BEGIN TEST CONFIG\nhidden: true\npoints: 2\n""" # END TEST CONFIG\n'
            "def test_negative(student):\n"
            "    assert student.call('double', -3) == -6, 'double(-3) should be -6'"
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
