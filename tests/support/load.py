"""Load for tests that must hold under a busy machine: CPU burners and client traffic.

Both are context managers that stop everything they started, even when the test fails.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from collections.abc import Iterator

from confluent_kafka import KafkaException, Producer

BURN = "while True: pass"


@contextlib.contextmanager
def cpu_burners(count: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """``count`` processes that each spin one core for as long as the block runs."""
    burners = [subprocess.Popen([sys.executable, "-c", BURN]) for _ in range(count)]
    try:
        yield burners
    finally:
        for burner in burners:
            burner.kill()
        for burner in burners:
            burner.wait(10)


class ProducerLoad:
    """A librdkafka producer that keeps sending to ``topic`` from a thread; counts what
    was acknowledged and what failed (the test decides what failures mean)."""

    def __init__(self, bootstrap: str, topic: str, value_bytes: int = 1024) -> None:
        self.topic = topic
        self.value = b"x" * value_bytes
        self.acked = 0
        self.failed = 0
        self._producer = Producer({"bootstrap.servers": bootstrap, "acks": "all", "linger.ms": 5})
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"load-{topic}", daemon=True)

    def _delivered(self, error: object, _message: object) -> None:
        if error is None:
            self.acked += 1
        else:
            self.failed += 1

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._producer.produce(self.topic, self.value, on_delivery=self._delivered)
            except (BufferError, KafkaException):
                self._producer.poll(0.05)
                continue
            self._producer.poll(0)

    def __enter__(self) -> ProducerLoad:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(10)
        self._producer.flush(10)
