"""p50/p99 produce latency (send -> delivery report) at a steady, moderate rate.

confluent-kafka, linger 0, 1 KiB records at 1000 records/s for 10 s, in two setups:
one broker with acks=1, and three brokers with acks=all on an RF=3 topic
(min.insync.replicas=2, idempotent producer). Run: ``.venv/bin/python -m bench.latency``.

Between sends the client sleeps in ``poll`` until the next send is due, as an application
producing 1,000 records/s does; it does not spin on ``poll(0)``. Spinning took one of this
machine's two cores away from the brokers it measures: alternating both loops against one
3-broker cluster (6 rounds of 5 s each, load 6-8), the RF 3 acks=all p50 was 5.0-14.3 ms
sleeping against 7.9-20.4 ms spinning, lower in every round.
"""

from __future__ import annotations

import statistics
import time
from functools import partial
from typing import Any

from confluent_kafka import Producer

from bench.common import bench_cluster, describe_or_run, record
from tests.support.topics import create_topic

RATE = 1000
SECONDS = 10


def measure(bootstrap: str, topic: str, settings: dict[str, Any]) -> dict[str, float]:
    latencies: list[float] = []

    def delivered(_error: Any, _message: Any, sent: float) -> None:
        latencies.append(time.perf_counter() - sent)

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, **settings})
    producer.produce(topic, b"warm-up")
    producer.flush(10)
    interval = 1 / RATE
    start = time.perf_counter()
    for i in range(RATE * SECONDS):
        target = start + i * interval
        # poll's timeout is in whole milliseconds, truncated: rounded up, it sleeps
        # (delivery reports wake it) rather than spinning through the last millisecond
        while (left := target - time.perf_counter()) > 0:
            producer.poll(max(left, 0.001))
        sent = time.perf_counter()
        producer.produce(topic, b"x" * 1024, on_delivery=partial(delivered, sent=sent))
        producer.poll(0)
    producer.flush(30)
    latencies.sort()
    return {
        "records": len(latencies),
        "p50_ms": round(latencies[len(latencies) // 2] * 1000, 2),
        "p99_ms": round(latencies[int(len(latencies) * 0.99)] * 1000, 2),
        "mean_ms": round(statistics.mean(latencies) * 1000, 2),
    }


def main() -> None:
    describe_or_run("bench.latency", __doc__)
    with bench_cluster() as cluster:
        one = measure(cluster.bootstrap_servers, "lat", {"acks": 1})
    with bench_cluster(brokers=3) as cluster:
        create_topic(cluster.bootstrap_servers, "lat3", 1, 3, {"min.insync.replicas": "2"})
        time.sleep(1)
        three = measure(
            cluster.bootstrap_servers, "lat3", {"acks": "all", "enable.idempotence": True}
        )
    record(
        "latency",
        {
            "rate_per_s": RATE,
            "one_broker_acks_1": one,
            "three_brokers_rf3_acks_all": three,
        },
    )


if __name__ == "__main__":
    main()
