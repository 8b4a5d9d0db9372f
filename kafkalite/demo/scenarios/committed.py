"""The lecture's question, on live replicas: RF=3, min.insync.replicas=2, is message 8
committed? 10? 11?

The lecture's picture is built on a real partition: offsets 0-8 on all three replicas,
9-10 on the leader and broker 2 (broker 3 was cut off and left the ISR), 11 on the leader
alone (broker 2 was cut off too, before the leader could drop it from the ISR: a leader
cut off from the controller quorum cannot change the ISR). The answer comes from the
leader's high watermark, after the class has guessed; then the leader crashes and the
class sees which of the three survive (Kafka Reliability, "Committed Messages" and
"Example 1: Write Anomaly").

A broker that crashes while cut off stays cut off until it is started again: a dead
machine sends nothing. (Kafka-Lite's link proxies hold, rather than drop, what a cut
link carried; healing a dead broker's links first would hand its last replies to the
others.)
"""

from __future__ import annotations

from kafkalite.demo.catalog import scenario_info
from kafkalite.demo.scenario import Scenario
from kafkalite.demo.steps import Outcome, Step
from kafkalite.demo.words import brokers, span

TOPIC = "payments"
ASKED = (8, 10, 11)


def answer(high_watermark: int, offsets: tuple[int, ...] = ASKED) -> dict[int, bool]:
    """Committed means below the leader's high watermark: on every in-sync replica."""
    return {offset: offset < high_watermark for offset in offsets}


def answer_in_words(high_watermark: int, isr: list[int]) -> str:
    marks = [
        f"{offset} {'committed' if ok else 'NOT committed'}"
        for offset, ok in answer(high_watermark).items()
    ]
    return (
        f"{', '.join(marks)}. The leader's high watermark is {high_watermark}: "
        f"{span(0, high_watermark - 1)} are on every in-sync replica ({brokers(isr)})."
    )


class Committed(Scenario):
    info = scenario_info("committed")
    topics = frozenset({TOPIC})

    def prepare(self) -> None:
        self.lab.create_topic(
            TOPIC, 1, 3, configs={"min.insync.replicas": "2"}, replicas=[[1, 2, 3]]
        )
        self.strong = self.lab.producer(acks="all")
        self.weak = self.lab.producer(acks=1)
        for i in range(9):
            self.strong.send(TOPIC, f"pay-{i}".encode()).get(timeout=10)

    def steps(self) -> list[Step]:
        return [
            Step("Broker 3 is cut off from the other brokers: the leader drops it from the "
                 "ISR.", self.cut_off_broker_3),
            Step("Messages 9 and 10 are written with acks=1: broker 2 fetches them, "
                 "broker 3 cannot.", self.write_9_and_10),
            Step("Broker 2 is cut off too, and message 11 is written with acks=1: only the "
                 "leader has it.", self.write_11),
            Step("Replication factor 3, min.insync.replicas=2: which of messages 8, 10 and "
                 "11 are committed?", blind=True),
            Step("The answer is the leader's high watermark: committed means on every "
                 "in-sync replica.", self.reveal),
            Step("The leader crashes now. Which of 8, 10 and 11 survive?", blind=True),
            Step("Broker 1 crashes; brokers 2 and 3 reconnect and elect a new leader from "
                 "the ISR.", self.crash_the_leader),
            Step("Broker 1 comes back as a follower and cuts its log to agree with the new "
                 "leader.", self.bring_back_broker_1),
            Step("The verdict: every acknowledgement against the log the cluster kept.",
                 self.judge),
        ]  # fmt: skip

    def cut_off_broker_3(self) -> Outcome:
        self.lab.isolate(3)
        isr = self.lab.wait_for_isr(TOPIC, size=2)
        return Outcome(f"The ISR is now {isr}: broker 3 keeps offsets 0-8.")

    def write_9_and_10(self) -> Outcome:
        for i in (9, 10):
            self.weak.send(TOPIC, f"pay-{i}".encode()).get(timeout=10)
        self.lab.wait_for(lambda: self._end_of(2) == 11, what="broker 2 to fetch offsets 9 and 10")
        return Outcome("Brokers 1 and 2 have offsets 0-10; broker 3 still has 0-8.")

    def write_11(self) -> Outcome:
        self.lab.isolate(2)
        offset = self.weak.send(TOPIC, b"pay-11").get(timeout=10).offset
        return Outcome(f"Message 11 is acknowledged (acks=1) at offset {offset}.")

    def reveal(self) -> Outcome:
        row = self.lab.partitions(TOPIC).iloc[0]
        hw, isr = int(row["high_watermark"]), sorted(row["isr"])
        return Outcome(
            answer_in_words(hw, isr),
            facts=(
                ("high-watermark", str(hw)),
                *((f"committed-{o}", str(ok).lower()) for o, ok in answer(hw).items()),
            ),
        )

    def crash_the_leader(self) -> Outcome:
        self.lab.isolate(1)  # a dead machine sends nothing (see the module's docstring)
        self.lab.kill(1)
        self.lab.heal(2)
        self.lab.heal(3)
        leader = self.lab.wait_for_leader(TOPIC, other_than=1)
        end = self._end_of(leader) or 0
        kept = [o for o in ASKED if o < end]
        gone = [o for o in ASKED if o >= end]
        return Outcome(
            f"Broker {leader} leads with {span(0, end - 1)}: "
            f"{' and '.join(map(str, kept)) or 'none'} survived"
            + (f", {' and '.join(map(str, gone))} did not." if gone else "."),
            facts=(("leader", str(leader)), ("log-end-offset", str(end))),
        )

    def bring_back_broker_1(self) -> Outcome:
        self.lab.heal(1)
        self.lab.start(1)
        self.lab.wait_for_isr(TOPIC, size=3)
        removed = sum(
            int(e["removed"]) for e in self.events("log_truncated", TOPIC) if e["broker"] == 1
        )
        gone = ": message 11 is gone for good" if removed else ""
        return Outcome(f"Broker 1 truncated {removed} record(s){gone}.")

    def judge(self) -> Outcome:
        result = self.lab.check(self.history)
        lost = ", ".join(sorted(v.decode() for v in result.lost_values)) or "nothing"
        return self.verdict(
            result,
            "messages 8, 10 and 11: a leader crash",
            text=f"Lost: {lost}, acknowledged by the leader alone (acks=1).",
        )

    def _end_of(self, broker: int) -> int | None:
        for row in self.lab.status()["partitions"]:
            if row["topic"] == TOPIC:
                for replica in row["replicas"]:
                    if replica["broker"] == broker:
                        end: int | None = replica.get("log_end_offset")
                        return end
        return None


SCENARIO = Committed
