"""A lost acknowledgement, and the duplicate the idempotent producer suppresses (Kafka
Reliability, "Using strong ACKs and retry" and "Exactly-Once Semantics: Producer Side").

The topic needs all three replicas in sync (min.insync.replicas=3). A follower hangs while
payment-1 waits for it: the leader has appended it, drops the follower from the ISR and
must answer NOT_ENOUGH_REPLICAS_AFTER_APPEND ("written, not committed"). The producer
cannot tell that from a failed write, so it retries once the follower is back: without
idempotence payment-1 then stands twice; with it the leader recognises the producer id
and sequence number and answers the retry with the first offset.
"""

from __future__ import annotations

from collections.abc import Callable

from kafkalite.demo.catalog import scenario_info
from kafkalite.demo.scenario import Scenario
from kafkalite.demo.steps import Outcome, Step
from kafkalite.lab.recording import read_final_log

PLAIN = "transfers"
IDEMPOTENT = "transfers-idempotent"


class Idempotence(Scenario):
    info = scenario_info("idempotence")
    topics = frozenset({PLAIN, IDEMPOTENT})

    def prepare(self) -> None:
        for topic in (PLAIN, IDEMPOTENT):
            self.lab.create_topic(
                topic, 1, 3, configs={"min.insync.replicas": "3"}, replicas=[[1, 2, 3]]
            )
        self.plain = self.lab.producer(acks="all", enable_idempotence=False)
        self.idempotent = self.lab.producer(acks="all", enable_idempotence=True)
        self.plain.send(PLAIN, b"payment-0").get(timeout=10)
        self.idempotent.send(IDEMPOTENT, b"payment-0").get(timeout=10)

    def steps(self) -> list[Step]:
        return [
            Step("payment-1 will wait for broker 3, which hangs: the leader appends it but "
                 "cannot confirm it, and the producer retries. How many copies will the log "
                 "hold?"),
            Step("Broker 3 hangs; the leader gives up on it and answers 'not enough "
                 "replicas'; the plain producer retries until broker 3 is back.",
                 self.lose_an_ack(PLAIN)),
            Step("The same with enable_idempotence=True: the producer numbers its batches, "
                 "the leader remembers the numbers.", self.lose_an_ack(IDEMPOTENT)),
            Step("The verdict: the plain producer's retry is a duplicate; the idempotent "
                 "one's is not.", self.judge),
        ]  # fmt: skip

    def lose_an_ack(self, topic: str) -> Callable[[], Outcome]:
        def run() -> Outcome:
            producer = self.plain if topic == PLAIN else self.idempotent
            self.lab.pause(3)
            in_flight = producer.send(topic, b"payment-1")
            self.lab.wait_for_isr(topic, size=2)  # the leader gave up: the answer is an error
            self.lab.resume(3)
            self.lab.wait_for_isr(topic, size=3)
            offset = in_flight.get(timeout=30).offset
            copies = self._copies(topic, b"payment-1")
            suppressed = len(self.events("duplicate_suppressed", topic))
            return Outcome(
                f"payment-1 acknowledged at offset {offset}; the log holds it "
                f"{'once' if len(copies) == 1 else f'{len(copies)} times'} (offsets "
                f"{', '.join(map(str, copies))})"
                + (f"; the leader suppressed {suppressed} duplicate." if suppressed else "."),
                facts=((f"copies-{topic}", str(len(copies))),),
            )

        return run

    def _copies(self, topic: str, value: bytes) -> list[int]:
        log = read_final_log(self.lab.live_bootstrap_servers(), [(topic, 0)])[(topic, 0)]
        return [offset for offset, v in sorted(log.items()) if v == value]

    def judge(self) -> Outcome:
        result = self.lab.check(self.history)
        return self.verdict(result, "a lost acknowledgement, retried")


SCENARIO = Idempotence
