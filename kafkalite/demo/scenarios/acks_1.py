"""acks=1 loses acknowledged writes on failover (Kafka Reliability, "Example 1: Write
Anomaly"; Distribution Analysis on network partitions).

A producer writes 20 messages a second with acks=1. The leader is cut off from the other
brokers but not from its producer: it goes on acknowledging alone while the others elect a
new leader (split brain), and when the network heals it truncates everything it
acknowledged alone. The timeline shows the writes never stopping; the checker counts the
acknowledged writes that are gone.
"""

from __future__ import annotations

from kafkalite.demo.catalog import scenario_info
from kafkalite.demo.scenario import BackgroundWrites, Scenario
from kafkalite.demo.steps import Outcome, Step
from kafkalite.demo.words import span
from kafkalite.lab.history import OpKind

TOPIC = "clicks"
ACKS_ALONE = 10
"""How many acknowledgements after the election the cut-off leader step waits for."""


class AcksOne(Scenario):
    info = scenario_info("acks-1")
    topics = frozenset({TOPIC})

    def prepare(self) -> None:
        self.lab.create_topic(
            TOPIC, 1, 3, configs={"min.insync.replicas": "1"}, replicas=[[1, 2, 3]]
        )
        self.producer = self.lab.producer(acks=1, retries=0)
        self.producer.send(TOPIC, b"warm-up").get(timeout=10)
        self.old_leader = 1
        self.writes: BackgroundWrites | None = None

    def steps(self) -> list[Step]:
        return [
            Step("A producer writes 20 messages a second with acks=1: the leader answers "
                 "once it has appended.", self.start_writing),
            Step("The leader is cut off from the other brokers, not from its producer. "
                 "Will the writes it acknowledges now survive?"),
            Step("Broker 1 is cut off: it acknowledges alone while brokers 2 and 3 elect a "
                 "new leader.", self.cut_off_the_leader),
            Step("The network heals: broker 1 learns of the new leader and truncates what "
                 "it acknowledged alone.", self.heal),
            Step("The verdict: every acknowledgement against the log the cluster kept.",
                 self.judge),
        ]  # fmt: skip

    def start_writing(self) -> Outcome:
        self.writes = self.write_in_background(self.producer, TOPIC, rate=20, prefix="click")
        self.lab.wait_for(lambda: len(self.history.of(OpKind.ACK)) >= 20, what="20 acks")
        return Outcome(f"Broker {self.old_leader}, the leader, acknowledges every write.")

    def cut_off_the_leader(self) -> Outcome:
        self.lab.isolate(self.old_leader)
        new = self.lab.wait_for_leader(TOPIC, other_than=self.old_leader)
        elected = self.events("leader_elected", TOPIC)
        since = max((e["time_ms"] for e in elected), default=0) / 1000
        self.lab.wait_for(
            lambda: sum(op.time > since for op in self.history.of(OpKind.ACK)) >= ACKS_ALONE,
            what="acknowledgements after the election",
        )
        return Outcome(
            f"Brokers 2 and 3 elected broker {new}; broker {self.old_leader} still thinks "
            "it leads, and its producer is still told every write succeeded.",
            facts=(("leader", str(new)),),
        )

    def heal(self) -> Outcome:
        self.lab.heal()
        self.lab.wait_for_isr(TOPIC, size=3)
        cut = [
            (int(e["from_offset"]), int(e["to_offset"]) - 1, int(e["removed"]))
            for e in self.events("log_truncated", TOPIC)
            if e["broker"] == self.old_leader
        ]
        removed = sum(n for _, _, n in cut)
        where = ", ".join(span(a, b) for a, b, _ in cut) or "nothing"
        return Outcome(
            f"Broker {self.old_leader} truncated {removed} record(s) ({where}) to agree with "
            "the new leader.",
            facts=(("truncated", str(removed)),),
        )

    def judge(self) -> Outcome:
        sent = self.writes.stop() if self.writes is not None else 0
        result = self.lab.check(self.history)
        return self.verdict(
            result,
            "acks=1, the leader cut off",
            text=f"{sent} sent with acks=1; {len(result.lost_values)} acknowledged and lost.",
        )


SCENARIO = AcksOne
