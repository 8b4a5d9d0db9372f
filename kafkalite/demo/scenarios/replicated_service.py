"""A replicated service on the log (Building Replicated Distributed Systems with Kafka).

The blog's design with its optimisation: one partition for all replicas of a key-value
store, each replica reading it in its own consumer group. The primary writes each request
to the log (acks=all, idempotent); replicas apply requests in log order at their own pace,
so they disagree while they lag and agree once they have read the same prefix (eventual
consistency). Reads served by the most lagging replica never go backwards (the blog's
monotonic reads). A broker crash costs the service nothing: the log is replicated.

The replicas commit their offsets to their groups, so the dashboard draws each group's
position on the log.
"""

from __future__ import annotations

import json
import time
from typing import Any

from kafka import TopicPartition
from kafka.structs import OffsetAndMetadata

from kafkalite.demo.catalog import scenario_info
from kafkalite.demo.scenario import Scenario
from kafkalite.demo.steps import Outcome, Step
from kafkalite.lab.history import History
from kafkalite.lab.lab import Lab, LabTimeoutError

TOPIC = "kv-log"
LOG = TopicPartition(TOPIC, 0)
ACCOUNTS = 10
CATCH_UP_S = 30.0


def apply(data: dict[str, Any], request: dict[str, Any]) -> None:
    """A request applied to a replica's state: idempotent, like the lab's ``apply_op``."""
    if request["op"] == "set":
        data[request["key"]] = request["value"]
    else:
        data.pop(request["key"], None)


class Replica:
    """One replica: its state, the offset it has reached, its own consumer group."""

    def __init__(self, lab: Lab, name: str) -> None:
        self.name = name
        self.data: dict[str, Any] = {}
        self.offset = 0
        self.applied: list[bytes] = []
        self.consumer = lab.consumer(group_id=f"kv-{name}", history=History())
        self.consumer.assign([LOG])
        self.consumer.seek(LOG, 0)

    def catch_up(self, at_most: int | None = None) -> None:
        end = self.consumer.end_offsets([LOG])[LOG]
        if at_most is not None:
            end = min(end, self.offset + at_most)
        deadline = time.monotonic() + CATCH_UP_S
        while self.offset < end:
            if time.monotonic() > deadline:
                raise LabTimeoutError(f"replica {self.name} stuck at offset {self.offset}")
            batch = self.consumer.poll(1000, max_records=end - self.offset).get(LOG, [])
            for record in batch:
                apply(self.data, json.loads(record.value))
                self.applied.append(record.value)
                self.offset = record.offset + 1
        self.consumer.commit({LOG: OffsetAndMetadata(self.offset, "", -1)})


class ReplicatedService(Scenario):
    info = scenario_info("replicated-service")
    topics = frozenset({TOPIC})

    def prepare(self) -> None:
        self.lab.create_topic(
            TOPIC, 1, 3, configs={"min.insync.replicas": "2"}, replicas=[[1, 2, 3]]
        )
        self.primary = self.lab.producer(acks="all", enable_idempotence=True)
        self.replicas: dict[str, Replica] = {}

    def _write(self, op: str, key: str, value: int | None = None) -> None:
        request = {"op": op, "key": key, "value": value}
        self.primary.send(TOPIC, json.dumps(request).encode())

    def steps(self) -> list[Step]:
        return [
            Step("The primary writes 25 requests to the log: ten accounts get 100, then 150, "
                 "then five are deleted.", self.write_requests),
            Step("Three replicas read the log in their own groups: a reads it all, b the "
                 "first 15 requests, c nothing yet.", self.read_at_their_pace),
            Step("A client must never see a balance go back in time. Which replica should "
                 "serve its reads?"),
            Step("The most lagging one: every replica has applied at least what it has.",
                 self.monotonic_reads),
            Step("The log's leader crashes; replicas b and c read on from the new leader.",
                 self.crash_the_leader),
            Step("The verdict: each replica applied every acknowledged request once, in "
                 "order, and all three agree.", self.judge),
        ]  # fmt: skip

    def write_requests(self) -> Outcome:
        for i in range(ACCOUNTS):
            self._write("set", f"account-{i}", 100)
        for i in range(ACCOUNTS):
            self._write("set", f"account-{i}", 150)
        for i in range(ACCOUNTS // 2, ACCOUNTS):
            self._write("delete", f"account-{i}")
        self.primary.flush(30)
        return Outcome(f"25 requests at offsets 0-24 of {TOPIC}-0, committed (acks=all).")

    def read_at_their_pace(self) -> Outcome:
        self.replicas = {name: Replica(self.lab, name) for name in "abc"}
        self.replicas["a"].catch_up()
        self.replicas["b"].catch_up(at_most=15)
        self.replicas["c"].catch_up(at_most=0)
        return Outcome(self._answers("account-3") + " " + self._answers("account-7"))

    def _answers(self, key: str) -> str:
        said = ", ".join(
            f"{name} (at {r.offset}) says {r.data.get(key, 'no such account')}"
            for name, r in self.replicas.items()
        )
        return f"{key}: {said}."

    def monotonic_reads(self) -> Outcome:
        slowest = min(self.replicas.values(), key=lambda r: r.offset)
        return Outcome(
            f"Replica {slowest.name}, at offset {slowest.offset}: the others are ahead of it, "
            "so a read it answers never shows an older state than one already seen.",
            facts=(("slowest", slowest.name),),
        )

    def crash_the_leader(self) -> Outcome:
        old = self.lab.leader(TOPIC)
        assert old is not None
        self.lab.kill(old)
        new = self.lab.wait_for_leader(TOPIC, other_than=old)
        for replica in self.replicas.values():
            replica.catch_up()
        self.lab.start(old)
        self.lab.wait_for_isr(TOPIC, size=3)
        return Outcome(
            f"Broker {old} crashed, broker {new} leads; all three replicas are at offset "
            f"{self.replicas['c'].offset}. " + self._answers("account-7")
        )

    def judge(self) -> Outcome:
        states = {name: r.data for name, r in self.replicas.items()}
        agree = all(data == states["a"] for data in states.values())
        results = {name: self.lab.check(output=r.applied) for name, r in self.replicas.items()}
        worst = next((r for r in results.values() if not r.valid), results["a"])
        return self.verdict(
            worst,
            "three replicas of a key-value store on one log",
            text=(
                f"The replicas {'agree' if agree else 'DISAGREE'}: "
                f"{len(states['a'])} accounts each. Every replica: "
                + "; ".join(f"{n}: {r.verdict()}" for n, r in results.items())
            ),
            facts=(("agree", str(agree).lower()),),
        )

    def close(self) -> None:
        super().close()
        for replica in getattr(self, "replicas", {}).values():
            replica.consumer.close()


SCENARIO = ReplicatedService
