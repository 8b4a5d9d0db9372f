"""A consumer dies and a replacement in its group takes over its partitions (Kafka
Reliability, "Exactly-Once Semantics: Consumer Side": the replacement must miss nothing
and should repeat nothing; the group's committed offsets are where it starts).

Clicks arrive two a second. c1, a member of group ``dashboards`` in a process of its own
(lab 06's ``kafkalite.lab.group_worker``, a kafka-python consumer), reads both partitions
of ``clicks``, processes each click and commits its offsets after each batch. A burst of
clicks gives it full batches again (however long the class discussed the question, c1
has caught up by then), and it is SIGKILLed in the middle of one: no last commit, no
LeaveGroup. c2 joins the group; the
coordinator gives it c1's partitions once c1's session has expired, and c2 reads on from
the committed offsets: nothing is missed, and exactly the clicks c1 processed after its
last commit are processed again (at least once; exactly once needs the output and the
offsets committed together, as the Spark scenario shows).
"""

from __future__ import annotations

import time

from kafkalite.demo import words
from kafkalite.demo.catalog import scenario_info
from kafkalite.demo.scenario import Scenario
from kafkalite.demo.steps import Outcome, Step
from kafkalite.lab.dashboard.model import DashboardState
from kafkalite.lab.workers import GroupWorker

TOPIC = "clicks"
GROUP = "dashboards"
PARTITIONS = 2
CLICKS = 30
"""Written before c1 starts, and again as the burst before the kill."""
RATE = 2
"""Clicks a second meanwhile: the timeline shows the writes going on through the kill."""
PER_RECORD_MS = 150
"""A batch of five clicks takes 0.75 s: the kill finds one half done."""
SESSION_TIMEOUT_MS = 6000
"""kafka-python's default is 10 s; 6 s (lab 06's) keeps the wait for c1's silence short."""
TAKE_OVER_S = 60.0


class ConsumerGroup(Scenario):
    info = scenario_info("consumer-group")
    topics = frozenset({TOPIC})

    def prepare(self) -> None:
        self.lab.create_topic(TOPIC, PARTITIONS, 3, configs={"min.insync.replicas": "2"})
        self.producer = self.lab.producer(acks="all")
        self._burst("click")
        self.writes = self.write_in_background(self.producer, TOPIC, rate=RATE, prefix="live")
        self.c1: GroupWorker | None = None
        self.c2: GroupWorker | None = None
        self.redo: list[str] = []

    def steps(self) -> list[Step]:
        return [
            Step(f"c1, the only member of group {GROUP}, reads both partitions of clicks; "
                 "it commits its offsets after each batch of up to five clicks.",
                 self.start_c1),
            Step("We kill c1 (SIGKILL) in the middle of a batch and start c2 in the same "
                 "group. Where does c2 start reading? Will it miss a click? Process one "
                 "twice?"),
            Step(f"{CLICKS} clicks come at once; c1 is killed half-way through a batch of "
                 "them: no last commit, no LeaveGroup.", self.kill_c1),
            Step("c2 joins the group; the coordinator hands it c1's partitions once c1's "
                 "session has expired.", self.start_c2),
            Step("The verdict: every click against what c1 and c2 processed.", self.judge),
        ]  # fmt: skip

    def words(self, state: DashboardState) -> list[str]:
        return [*words.partitions(state), *words.group(state, GROUP)]

    def start_c1(self) -> Outcome:
        self.c1 = self._member("c1")
        c1 = self.c1
        self.lab.wait_for(lambda: len(c1.events("committed")) >= 2, TAKE_OVER_S, "c1's commits")
        return Outcome(
            f"c1 has processed {len(c1.processed())} clicks and committed "
            f"{self._offsets()} (the group's offsets).",
        )

    def kill_c1(self) -> Outcome:
        c1 = self.c1
        assert c1 is not None, "c1 was started"
        self._burst("burst")
        self.redo = c1.kill_mid_batch(lambda: self.lab.committed_offsets(GROUP, TOPIC))
        self.killed_at = time.monotonic()
        self.killed_at_wall = time.time()
        return Outcome(
            f"c1 was killed after processing {', '.join(self.redo)} since its last commit; "
            f"the group's offsets are still {self._offsets()}.",
            facts=(("uncommitted", str(len(self.redo))),),
        )

    def start_c2(self) -> Outcome:
        self.c2 = self._member("c2")
        c2 = self.c2
        first = self.lab.wait_for(
            lambda: c2.processed() and c2.processed()[0], TAKE_OVER_S, "c2 to read"
        )
        took = time.monotonic() - self.killed_at
        return Outcome(
            f"c2 reads {', '.join(f'{TOPIC}-{p}' for p in c2.assignment())} on from the "
            "group's offsets, "
            f"{took:.1f} s after the kill; its first click is {first}.",
            facts=(("c2-partitions", ",".join(map(str, c2.assignment()))),),
        )

    def judge(self) -> Outcome:
        c1, c2 = self.c1, self.c2
        assert c1 is not None and c2 is not None, "c1 and c2 were started"
        self.writes.stop()
        acked = {a.value.decode() for a in self.history.acks()}
        self.lab.wait_for(
            lambda: acked <= {*c1.processed(), *c2.processed()}, TAKE_OVER_S, "c2 to catch up"
        )
        output = c1.processed() + c2.processed()
        twice = sorted(v for v in set(output) if output.count(v) > 1)
        redone = twice == sorted(self.redo)
        result = self.lab.check(self.history, output=[v.encode() for v in output])
        return self.verdict(
            result,
            "clicks written while c1 died and c2 took over",
            kills=[(self.killed_at_wall, "c1 killed")],
            text=f"Processed twice: {', '.join(twice) or 'none'}; "
            + (
                "exactly what c1 had not committed. At least once: the output and the "
                "offsets were not committed together."
                if redone
                else f"c1 had not committed {', '.join(self.redo)}."
            ),
            facts=(("twice", str(len(twice))), ("redone", str(redone).lower())),
        )

    def close(self) -> None:
        super().close()
        for member in (getattr(self, "c1", None), getattr(self, "c2", None)):
            if member is not None:
                member.stop()

    def _burst(self, prefix: str) -> None:
        for i in range(CLICKS):
            self.producer.send(TOPIC, f"{prefix}-{i}".encode(), partition=i % PARTITIONS)
        self.producer.flush()

    def _member(self, name: str) -> GroupWorker:
        return self.lab.group_worker(
            name,
            TOPIC,
            GROUP,
            per_record_ms=PER_RECORD_MS,
            session_timeout_ms=SESSION_TIMEOUT_MS,
        )

    def _offsets(self) -> str:
        groups = self.lab.groups()
        rows = groups[groups["group"] == GROUP].sort_values("partition")
        return (
            ", ".join(f"{TOPIC}-{r.partition} {r.committed_offset}" for r in rows.itertuples())
            or "none yet"
        )


SCENARIO = ConsumerGroup
