"""Lab 10's failure stories, shared by the lab and its grading: the same faults in the same
order, whatever producer settings and topic configs are put through them.

A story is a sequence of phases, each some time of writing under one fault: a phase's
length is how long the producer meets that fault (enough records, at 50 a second, to see
what is acknowledged, refused and lost), not a wait standing in for an event. Where a phase
needs an event first (the ISR shrunk, a new leader elected) the story waits for it, with a
bound. Each phase's start and end are kept, so that what was acknowledged *during* a fault
can be told from what was acknowledged once it was over.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafkalite.lab.history import OpKind

if TYPE_CHECKING:
    from kafkalite.lab.history import History
    from kafkalite.lab.lab import Lab

STORY_PRODUCER = {
    "enable_idempotence": False,
    "delivery_timeout_ms": 3000,
    "request_timeout_ms": 1000,
    "max_block_ms": 1000,
}
"""The story's producer gives up on a record after 3 s, so that an unavailable topic shows
as errors within the story. Settings put through a story may change anything but the
timeouts (``STORY_TIMEOUTS``)."""
STORY_TIMEOUTS = frozenset(STORY_PRODUCER) - {"enable_idempotence"}
PHASE_S = 1.5
RATE = 50


@dataclass
class Story:
    """What a story's producer saw (``history``: check it with ``lab.check``), and when
    each fault lasted (wall-clock seconds, as the history's ops)."""

    history: History
    phases: dict[str, tuple[float, float]] = field(default_factory=dict)

    def acked_during(self, phase: str) -> int:
        start, end = self.phases[phase]
        return sum(1 for op in self.history.of(OpKind.ACK) if start <= op.time < end)

    def tally(self, lost: int) -> dict[str, float]:
        """Acknowledged and refused writes, the fraction acknowledged, and ``lost``."""
        acked, failed = len(self.history.of(OpKind.ACK)), len(self.history.of(OpKind.ERROR))
        answered = acked + failed
        return {
            "acked": acked,
            "failed": failed,
            "availability": acked / answered if answered else 0.0,
            "lost": lost,
        }


BROKER_2_DOWN = "broker 2 down"
BROKER_1_DOWN = "broker 1 down, broker 2 back"


def two_crashes(lab: Lab, topic: str, configs: dict[str, str], **producer: Any) -> Story:
    """Create ``topic`` (one partition, replicas on brokers 1 and 2, ``configs``) and write
    50 records a second, with ``acks="all"`` unless ``producer`` says otherwise, through:

    1. broker 2 crashes: the ISR shrinks to broker 1, which takes what it accepts alone;
    2. broker 1 crashes and broker 2 comes back, without what broker 1 took alone;
    3. broker 1 comes back.

    The first write (before any fault) must be acknowledged: a topic that refuses writes
    with both replicas in sync raises here."""
    lab.create_topic(topic, partitions=1, replication_factor=2, replicas=[[1, 2]], configs=configs)
    story = Story(lab.new_history())
    writer = lab.producer(history=story.history, **{"acks": "all", **STORY_PRODUCER, **producer})
    writer.send(topic, b"warm-up").get(timeout=10)

    def faults() -> None:
        time.sleep(0.5)
        lab.kill(2)
        lab.wait_for_isr(topic, size=1)
        story.phases[BROKER_2_DOWN] = (time.time(), time.time() + PHASE_S)
        time.sleep(PHASE_S)
        lab.kill(1)
        lab.start(2)
        started = time.time()
        time.sleep(PHASE_S)
        story.phases[BROKER_1_DOWN] = (started, time.time())
        lab.start(1)

    lab.write_while(writer, topic, seconds=2 * PHASE_S + 2, during=faults, rate=RATE)
    writer.close()
    lab.wait_for_isr(topic, size=2)
    return story


def isolated_leader(lab: Lab, topic: str, configs: dict[str, str], **producer: Any) -> Story:
    """Create ``topic`` (one partition, replicas on brokers 1, 2 and 3, broker 1 leading,
    ``configs``) and write 50 records a second, with ``acks="all"`` unless ``producer``
    says otherwise, while broker 1 is cut off from every other broker (not from its
    clients) until the others have elected a new leader, and one second more."""
    lab.create_topic(
        topic, partitions=1, replication_factor=3, replicas=[[1, 2, 3]], configs=configs
    )
    story = Story(lab.new_history())
    writer = lab.producer(history=story.history, **{"acks": "all", **STORY_PRODUCER, **producer})
    writer.send(topic, b"warm-up").get(timeout=10)

    def partition_the_leader() -> None:
        time.sleep(1)
        cut = time.time()
        lab.isolate(1)
        lab.wait_for_leader(topic, other_than=1)
        time.sleep(1)
        story.phases["broker 1 isolated"] = (cut, time.time())
        lab.heal(1)

    lab.write_while(writer, topic, seconds=7, during=partition_the_leader, rate=RATE)
    writer.close()
    lab.wait_for_isr(topic, size=3)
    return story
