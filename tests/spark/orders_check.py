"""Orders written while faults happen, and the exactly-once pipeline's output judged
against them with the history checker.

The pipeline (``examples.spark.exactly_once_topic``) writes each order with where it came
from (source partition and offset) to the same partition number of the output topic, so
the output of one partition is, in order, what "the Spark query read" from the input
partition. Given to the checker as one consumer's polls, a record written twice is a
``nonmonotonic_poll``, a record missed a ``skipped_offset``, a record that a failover
took back a ``vanished_read``; and every acknowledged order must be in the input log.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import Producer

from examples.spark.orders import expected_totals, order
from kafkalite.checker import Ack, Poll, Report, check
from tests.spark.support import read_topic


class OrderLoad:
    """Orders 0, 1, 2, ... from a thread at about ``rate`` per second, idempotent
    acks=all, each acknowledgement recorded for the checker."""

    def __init__(self, bootstrap: str, topic: str, rate: float = 100) -> None:
        self.topic = topic
        self.rate = rate
        self.acks: list[Ack] = []
        self.sent = 0
        self._producer = Producer(
            {"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5}
        )
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="orders", daemon=True)

    def _delivered(self, error: object, message: object) -> None:
        if error is None:
            m: Any = message
            self.acks.append(Ack((self.topic, m.partition()), m.value(), m.offset()))

    def _run(self) -> None:
        started = time.monotonic()
        while not self._stop.is_set():
            if self.sent > (time.monotonic() - started) * self.rate:
                self._producer.poll(0.01)
                continue
            key, value = order(self.sent)
            try:
                self._producer.produce(self.topic, value, key=key, on_delivery=self._delivered)
            except BufferError:
                self._producer.poll(0.05)
                continue
            self.sent += 1
            self._producer.poll(0)

    def __enter__(self) -> OrderLoad:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)
        assert self._producer.flush(60) == 0, "orders still unacknowledged after 60 s"

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is not None:  # the test failed: drop what is queued, add no error of ours
            self._stop.set()
            self._thread.join(10)
            self._producer.purge()
            self._producer.flush(0)
        elif not self._stop.is_set():
            self.stop()


@dataclass
class Verdict:
    report: Report
    gaps_or_extras: dict[int, str] = field(default_factory=dict)
    totals_match: bool = False
    output_records: int = 0

    def assert_exactly_once(self) -> None:
        assert self.report.valid, self.report.summary()
        assert not self.gaps_or_extras, self.gaps_or_extras
        assert self.totals_match, "per-customer totals differ from the orders'"


def judge(bootstrap: str, source: str, output: str, acks: list[Ack]) -> Verdict:
    final_log: dict[tuple[str, int], dict[int, bytes]] = {}  # the input, read_uncommitted
    for r in read_topic(bootstrap, source, "read_uncommitted"):
        final_log.setdefault((source, r.partition), {})[r.offset] = r.value
    polls: list[Poll] = []
    order_ids: list[int] = []
    read: dict[int, list[int]] = {}
    for r in read_topic(bootstrap, output):
        enriched = json.loads(r.value)
        partition, offset = enriched["source_partition"], enriched["source_offset"]
        assert partition == r.partition, f"order from {partition} written to {r.partition}"
        value = order(enriched["order_id"])[1]
        polls.append(Poll("spark", (source, partition), ((offset, value),)))
        order_ids.append(enriched["order_id"])
        read.setdefault(partition, []).append(offset)
    verdict = Verdict(check(acks, polls, [], final_log), output_records=len(order_ids))
    for (_, partition), records in final_log.items():
        if read.get(partition, []) != sorted(records):
            got = read.get(partition, [])
            verdict.gaps_or_extras[partition] = (
                f"output has {len(got)} records of {len(records)}; "
                f"missing {sorted(set(records) - set(got))[:5]}"
            )
    input_ids = [json.loads(v)["order_id"] for log in final_log.values() for v in log.values()]
    verdict.totals_match = expected_totals(order_ids) == expected_totals(input_ids)
    return verdict
