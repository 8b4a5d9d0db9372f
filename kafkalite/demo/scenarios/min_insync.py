"""min.insync.replicas refuses writes it cannot protect (Kafka Reliability, "Minimum
In-Sync Replicas" and "Backoff: Not Enough Replicas Exception").

With one broker of three stopped, two replicas are in sync. Raised live to 3,
``min.insync.replicas`` makes the leader refuse acks=all writes with NOT_ENOUGH_REPLICAS
(nothing appended), while an acks=1 write is still taken: the setting protects only the
writers who asked for acks=all.
"""

from __future__ import annotations

from kafkalite.demo.catalog import scenario_info
from kafkalite.demo.scenario import Scenario
from kafkalite.demo.steps import Outcome, Step
from kafkalite.lab.recording import RecordingProducer

TOPIC = "orders"


def try_write(producer: RecordingProducer, value: bytes) -> str:
    """``acked at N`` or the error's class name (what the producer was told)."""
    try:
        return f"acked at {producer.send(TOPIC, value).get(timeout=10).offset}"
    except Exception as error:  # the answer is the lesson
        return type(error).__name__


class MinInsync(Scenario):
    info = scenario_info("min-insync")
    topics = frozenset({TOPIC})

    def prepare(self) -> None:
        self.lab.create_topic(
            TOPIC, 1, 3, configs={"min.insync.replicas": "2"}, replicas=[[1, 2, 3]]
        )
        self.strong = self.lab.producer(acks="all", retries=0)
        self.weak = self.lab.producer(acks=1, retries=0)

    def steps(self) -> list[Step]:
        return [
            Step("Five acks=all writes with three replicas in sync: each waits for every "
                 "in-sync replica.", self.write_five),
            Step("Broker 3 stops: two replicas stay in sync, still enough for "
                 "min.insync.replicas=2.", self.stop_broker_3),
            Step("min.insync.replicas is raised to 3, live.", self.raise_min_insync),
            Step("Two replicas in sync, three required: will the leader take an acks=all "
                 "write? An acks=1 write?"),
            Step("One acks=all and one acks=1 write, no retries: the leader answers both.",
                 self.write_both),
            Step("Broker 3 comes back: with three in sync, acks=all writes are taken again.",
                 self.start_broker_3),
            Step("The verdict: nothing acknowledged was lost; the refused write was never "
                 "written.", self.judge),
        ]  # fmt: skip

    def write_five(self) -> Outcome:
        answers = [try_write(self.strong, f"order-{i}".encode()) for i in range(5)]
        return Outcome(f"Five writes: {answers[-1]} the last.")

    def stop_broker_3(self) -> Outcome:
        self.lab.stop(3)
        isr = self.lab.wait_for_isr(TOPIC, size=2)
        answer = try_write(self.strong, b"order-5")
        return Outcome(f"ISR {isr}; an acks=all write: {answer}.")

    def raise_min_insync(self) -> Outcome:
        self.lab.set_config(TOPIC, {"min.insync.replicas": "3"})
        now = self.lab.topic_config(TOPIC)["min.insync.replicas"]
        return Outcome(f"min.insync.replicas is {now}; the ISR has 2 replicas.")

    def write_both(self) -> Outcome:
        strong = try_write(self.strong, b"order-all")
        weak = try_write(self.weak, b"order-one")
        return Outcome(
            f"acks=all: {strong}. acks=1: {weak}.",
            facts=(("acks-all", strong.split()[0]), ("acks-1", weak.split()[0])),
        )

    def start_broker_3(self) -> Outcome:
        self.lab.start(3)
        isr = self.lab.wait_for_isr(TOPIC, size=3)
        answer = try_write(self.strong, b"order-6")
        return Outcome(f"ISR {isr}; an acks=all write: {answer}.")

    def judge(self) -> Outcome:
        result = self.lab.check(self.history)
        return self.verdict(result, "min.insync.replicas=3 with two replicas in sync")


SCENARIO = MinInsync
