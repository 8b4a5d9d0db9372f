"""The controller's own failover (Apache Kafka - Distribution Analysis: "each Kafka
cluster has one controller broker ... In the case that the controller broker fails ...").

Kafka-Lite's controller is a Raft quorum over the three brokers, as Kafka's KRaft is
(the seed describes the older ZooKeeper design; its last lines name the Raft one). The
partition is placed so that the active controller also leads it; that broker is killed
under a stream of acks=all writes. The two other voters elect a new controller (a new
quorum epoch), and the new controller elects a new leader for the partition from its ISR.
"""

from __future__ import annotations

from kafkalite.demo.catalog import scenario_info
from kafkalite.demo.scenario import BackgroundWrites, Scenario
from kafkalite.demo.steps import Outcome, Step
from kafkalite.lab.history import OpKind

TOPIC = "orders"


class Controller(Scenario):
    info = scenario_info("controller")
    topics = frozenset({TOPIC})

    def prepare(self) -> None:
        self.first = self.lab.wait_for(self.lab.controller, what="an active controller")
        others = [b.broker_id for b in self.lab.cluster.spec.brokers if b.broker_id != self.first]
        self.lab.create_topic(
            TOPIC, 1, 3, configs={"min.insync.replicas": "2"}, replicas=[[self.first, *others]]
        )
        self.producer = self.lab.producer(acks="all")
        self.producer.send(TOPIC, b"warm-up").get(timeout=10)
        self.writes: BackgroundWrites | None = None

    def _quorum_epoch(self) -> int:
        epoch: int = (self.lab.status().get("quorum") or {}).get("epoch", -1)
        return epoch

    def steps(self) -> list[Step]:
        return [
            Step("Orders are written 20 a second with acks=all; one broker is both the "
                 "active controller and the leader of orders-0.", self.start_writing),
            Step("We kill the active controller. Who elects the new leader of orders-0, "
                 "and how long do writes wait?"),
            Step("The controller is killed: the two other voters elect a new controller, "
                 "which elects a new leader.", self.kill_the_controller),
            Step("The old controller comes back as a follower of the quorum and of the "
                 "partition.", self.bring_it_back),
            Step("The verdict: every acknowledged order is in the log.", self.judge),
        ]  # fmt: skip

    def start_writing(self) -> Outcome:
        self.writes = self.write_in_background(self.producer, TOPIC, rate=20, prefix="order")
        self.lab.wait_for(lambda: len(self.history.of(OpKind.ACK)) >= 20, what="20 acks")
        return Outcome(
            f"Broker {self.first} is the active controller (quorum epoch "
            f"{self._quorum_epoch()}) and leads {TOPIC}-0.",
            facts=(("controller", str(self.first)),),
        )

    def kill_the_controller(self) -> Outcome:
        before = self._quorum_epoch()
        self.lab.kill(self.first)
        controller = self.lab.wait_for(
            lambda: (c := self.lab.controller()) not in (None, self.first) and c,
            what="a new active controller",
        )
        leader = self.lab.wait_for_leader(TOPIC, other_than=self.first)
        return Outcome(
            f"Broker {controller} is the controller now (quorum epoch {before} → "
            f"{self._quorum_epoch()}); it elected broker {leader} to lead {TOPIC}-0.",
            facts=(("controller", str(controller)), ("leader", str(leader))),
        )

    def bring_it_back(self) -> Outcome:
        self.lab.start(self.first)
        self.lab.wait_for_isr(TOPIC, size=3)
        return Outcome(
            f"Broker {self.first} is back in the ISR; broker {self.lab.controller()} stays "
            "the controller."
        )

    def judge(self) -> Outcome:
        sent = self.writes.stop() if self.writes is not None else 0
        result = self.lab.check(self.history)
        return self.verdict(
            result, "the active controller killed", text=f"{sent} orders sent with acks=all."
        )


SCENARIO = Controller
