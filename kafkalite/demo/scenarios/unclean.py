"""Unclean leader election and the read anomaly (Kafka Reliability, "Example 2: Read
Anomaly": a consumer reads a message, and later it is gone).

Two replicas; broker 2 stops and leaves the ISR; broker 1 commits ten entries alone
(min.insync.replicas=1), and a consumer reads them. Then broker 1 dies and broker 2, out
of sync, comes back: with ``unclean.leader.election.enable=true`` it leads, without the
ten entries. New entries take their offsets, so reading again gives other values at the
same offsets. Kafka keeps unclean election off by default for this reason.
"""

from __future__ import annotations

from kafka import TopicPartition

from kafkalite.demo.catalog import scenario_info
from kafkalite.demo.scenario import Scenario
from kafkalite.demo.steps import Outcome, Step
from kafkalite.demo.words import span

TOPIC = "ledger"
PARTITION = TopicPartition(TOPIC, 0)


class Unclean(Scenario):
    info = scenario_info("unclean")
    topics = frozenset({TOPIC})

    def prepare(self) -> None:
        self.lab.create_topic(
            TOPIC,
            1,
            2,
            replicas=[[1, 2]],
            configs={"min.insync.replicas": "1", "unclean.leader.election.enable": "true"},
        )
        self.producer = self.lab.producer(acks="all")
        for i in range(5):
            self.producer.send(TOPIC, f"entry-{i}".encode()).get(timeout=10)

    def steps(self) -> list[Step]:
        return [
            Step("Broker 2 stops: broker 1 is alone in the ISR.", self.stop_broker_2),
            Step("Ten entries are written with acks=all: min.insync.replicas=1 lets broker 1 "
                 "commit them alone.", self.write_ten),
            Step("A consumer reads the partition from the start.", self.read),
            Step("Broker 1 dies and broker 2, out of sync, comes back. With unclean leader "
                 "election on, what will the consumer read?"),
            Step("Broker 1 is killed; broker 2 starts and is elected although it was out of "
                 "the ISR.", self.unclean_election),
            Step("Three new entries are written, and the consumer reads from the start "
                 "again.", self.read_again),
            Step("Broker 1 returns and truncates the ten entries to agree with the new "
                 "leader.", self.bring_back_broker_1),
            Step("The verdict: acknowledged entries lost, and reads of records that "
                 "vanished.", self.judge),
        ]  # fmt: skip

    def stop_broker_2(self) -> Outcome:
        self.lab.stop(2)
        isr = self.lab.wait_for_isr(TOPIC, size=1)
        return Outcome(f"ISR {isr}: broker 2 keeps offsets 0-4.")

    def write_ten(self) -> Outcome:
        for i in range(5, 15):
            self.producer.send(TOPIC, f"entry-{i}".encode()).get(timeout=10)
        return Outcome("Entries 5-14 are committed: the high watermark is 15.")

    def _read_all(self) -> list[int]:
        consumer = self.lab.consumer(consumer_timeout_ms=1500)
        consumer.assign([PARTITION])
        consumer.seek_to_beginning(PARTITION)
        offsets = [record.offset for record in consumer]
        consumer.close()
        return offsets

    def read(self) -> Outcome:
        offsets = self._read_all()
        return Outcome(f"The consumer read {len(offsets)} entries, offsets 0-{offsets[-1]}.")

    def unclean_election(self) -> Outcome:
        self.lab.kill(1)
        self.lab.start(2)
        leader = self.lab.wait_for_leader(TOPIC, other_than=1)
        unclean = bool(self.events("unclean_leader_elected", TOPIC))
        end = int(self.lab.partitions(TOPIC).iloc[0]["high_watermark"])
        return Outcome(
            f"Broker {leader} leads ({'an unclean' if unclean else 'a clean'} election) "
            f"with {span(0, end - 1)}: entries 5-14 are not there.",
            facts=(("leader", str(leader)), ("unclean", str(unclean).lower())),
        )

    def read_again(self) -> Outcome:
        # a new producer: the old one's sequence numbers went on past what broker 2 knows
        producer = self.lab.producer(acks="all")
        for i in range(15, 18):
            producer.send(TOPIC, f"entry-{i}".encode()).get(timeout=10)
        offsets = self._read_all()
        return Outcome(
            f"This time the consumer read {len(offsets)} entries: offsets 5-7 now hold "
            "entries 15-17, and 8-14 are gone."
        )

    def bring_back_broker_1(self) -> Outcome:
        self.lab.start(1)
        self.lab.wait_for_isr(TOPIC, size=2)
        removed = sum(
            int(e["removed"]) for e in self.events("log_truncated", TOPIC) if e["broker"] == 1
        )
        return Outcome(f"Broker 1 truncated {removed} records it had committed.")

    def judge(self) -> Outcome:
        result = self.lab.check(self.history)
        return self.verdict(result, "unclean leader election")


SCENARIO = Unclean
