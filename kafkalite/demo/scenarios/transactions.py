"""An aborted transaction is invisible to read_committed (Kafka Reliability,
"Exactly-Once Semantics"; Distribution Analysis: "writes to multiple partitions either all
succeed or not at all").

A transfer is two records in two partitions, written in one transaction. The first
transfer's program sends its debit and crashes before the credit; while the transaction
is open, a read_uncommitted consumer sees the debit and a read_committed one stops at the
last stable offset. The program's successor starts with the same ``transactional.id``: the
coordinator aborts the open transaction (and fences the crashed instance). A second
transfer commits, and both its records become visible together.

The verdict uses the exactly-once checker: the committed transfer's records are the
input, what the read_committed consumer read and the topic's committed content are the
output; a debit of the aborted transfer read by read_committed would be an "aborted read".
"""

from __future__ import annotations

from kafka import TopicPartition

from kafkalite.checker.exactly_once import check_exactly_once
from kafkalite.demo.catalog import scenario_info
from kafkalite.demo.scenario import Scenario
from kafkalite.demo.steps import Outcome, Step
from kafkalite.lab.anomalies import result_of
from kafkalite.lab.history import History, OpKind
from kafkalite.lab.recording import RecordingProducer

TOPIC = "accounts"
PARTITIONS = [TopicPartition(TOPIC, 0), TopicPartition(TOPIC, 1)]
TRANSACTIONAL_ID = "bank"
Log = dict[tuple[str, int], dict[int, bytes]]


class Transactions(Scenario):
    info = scenario_info("transactions")
    topics = frozenset({TOPIC})

    def prepare(self) -> None:
        self.lab.create_topic(TOPIC, 2, 3, configs={"min.insync.replicas": "2"})
        self.aborted = History()
        """The crashed program's writes: sent, never committed."""
        self.crashed: RecordingProducer | None = None

    def steps(self) -> list[Step]:
        return [
            Step("A transfer begins: the bank sends alice:-10 in a transaction, then "
                 "crashes before the credit.", self.debit_and_crash),
            Step("A read_committed and a read_uncommitted consumer read now. Which one sees "
                 "the debit?"),
            Step("Both consumers read both partitions from the start.", self.read_both),
            Step("The bank's successor starts with the same transactional.id: the "
                 "coordinator aborts the open transaction.", self.successor),
            Step("The successor transfers 10 from alice to bob and commits: both records "
                 "become visible together.", self.transfer),
            Step("The verdict: read_committed read the committed transfer, never the "
                 "aborted debit.", self.judge),
        ]  # fmt: skip

    def debit_and_crash(self) -> Outcome:
        self.crashed = self.lab.producer(transactional_id=TRANSACTIONAL_ID, history=self.aborted)
        self.crashed.init_transactions()
        self.crashed.begin_transaction()
        sent = self.crashed.send(TOPIC, b"alice:-10", key=b"alice").get(timeout=10)
        return Outcome(
            f"alice:-10 is at offset {sent.offset} of {TOPIC}-{sent.partition}, in an open "
            "transaction: the last stable offset stays before it."
        )

    def _read(self, isolation_level: str, history: History | None = None) -> list[bytes]:
        consumer = self.lab.consumer(
            isolation_level=isolation_level, consumer_timeout_ms=1500, history=history
        )
        consumer.assign(PARTITIONS)
        consumer.seek_to_beginning(*PARTITIONS)
        values = [record.value for record in consumer]
        consumer.close()
        return values

    def read_both(self) -> Outcome:
        uncommitted = self._read("read_uncommitted", History())
        committed = self._read("read_committed", self.history)
        return Outcome(
            f"read_uncommitted read {_names(uncommitted)}; read_committed read "
            f"{_names(committed)}.",
            facts=(("read-committed", str(len(committed))),),
        )

    def successor(self) -> Outcome:
        self.bank = self.lab.producer(transactional_id=TRANSACTIONAL_ID)
        self.bank.init_transactions()
        self.lab.wait_for(
            lambda: (
                not any(p["open_transactions"] for p in self._partitions() if p["topic"] == TOPIC)
            ),
            what="the open transaction to be aborted",
        )
        aborted = len(self.events("txn_aborted"))
        return Outcome(
            f"The coordinator aborted the crashed instance's transaction ({aborted} abort): "
            "an abort marker follows alice:-10."
        )

    def transfer(self) -> Outcome:
        self.bank.begin_transaction()
        self.bank.send(TOPIC, b"alice:-10", key=b"alice")
        self.bank.send(TOPIC, b"bob:+10", key=b"bob")
        self.bank.commit_transaction()
        return Outcome("The transfer committed: a commit marker follows each of its records.")

    def judge(self) -> Outcome:
        committed = self._read("read_committed", self.history)
        inputs: Log = {}
        for op in self.history.of(OpKind.ACK):
            assert op.partition is not None and op.offset is not None and op.value is not None
            inputs.setdefault((op.topic, op.partition), {})[op.offset] = op.value
        report = check_exactly_once(
            inputs,
            self._log("read_committed"),
            self._log("read_uncommitted"),
            self.history.polls(),
            [],
            lambda value: value,
        )
        return self.verdict(
            result_of(report),
            "a transfer aborted, a transfer committed",
            text=f"read_committed read {_names(committed)}.",
        )

    def _log(self, isolation_level: str) -> Log:
        consumer = self.lab.consumer(
            isolation_level=isolation_level, consumer_timeout_ms=1500, history=History()
        )
        consumer.assign(PARTITIONS)
        consumer.seek_to_beginning(*PARTITIONS)
        log: Log = {}
        for record in consumer:
            log.setdefault((record.topic, record.partition), {})[record.offset] = record.value
        consumer.close()
        return log

    def _partitions(self) -> list[dict[str, object]]:
        partitions: list[dict[str, object]] = self.lab.status()["partitions"]
        return partitions


def _names(values: list[bytes]) -> str:
    return ", ".join(v.decode() for v in values) or "nothing"


SCENARIO = Transactions
