"""p50/p99 produce latency (send -> delivery report) at a steady, moderate rate.

confluent-kafka, acks=1, linger 0, 1 KiB records at 1000 records/s for 10 s.
Run: ``.venv/bin/python -m bench.latency``.
"""

from __future__ import annotations

import statistics
import time

from confluent_kafka import Producer

from bench.common import bench_cluster, record

RATE = 1000
SECONDS = 10


def main() -> None:
    latencies: list[float] = []
    with bench_cluster() as cluster:
        producer = Producer(
            {"bootstrap.servers": cluster.bootstrap_servers, "acks": 1, "linger.ms": 0}
        )
        producer.produce("lat", b"warm-up")
        producer.flush(10)
        interval = 1 / RATE
        start = time.perf_counter()
        for i in range(RATE * SECONDS):
            target = start + i * interval
            while time.perf_counter() < target:
                producer.poll(0)
            sent = time.perf_counter()
            producer.produce(
                "lat",
                b"x" * 1024,
                on_delivery=lambda err, msg, sent=sent: latencies.append(
                    time.perf_counter() - sent
                ),
            )
            producer.poll(0)
        producer.flush(30)
    latencies.sort()
    record(
        "latency",
        {
            "rate_per_s": RATE,
            "records": len(latencies),
            "p50_ms": round(latencies[len(latencies) // 2] * 1000, 2),
            "p99_ms": round(latencies[int(len(latencies) * 0.99)] * 1000, 2),
            "mean_ms": round(statistics.mean(latencies) * 1000, 2),
        },
    )


if __name__ == "__main__":
    main()
