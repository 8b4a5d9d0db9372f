"""The scenarios ``kafkalite demo`` can show, in lecture order (pure, and light: the CLI's
``--list`` reads it without loading the lab, Spark or any widget).

Each entry names the lecture it follows (the seeds in ``shared/seeds``: 004 the reliability
lecture, 001 the controller, 000 the replicated service) and what it needs beyond the
lab's cluster.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ScenarioInfo:
    slug: str
    """What ``kafkalite demo SLUG`` opens."""
    title: str
    summary: str
    """One line: what the class sees happen."""
    lecture: str
    needs: str = ""
    """A Python package the scenario needs beyond the lab (``pyspark``), or nothing."""


SCENARIOS = (
    ScenarioInfo(
        "committed",
        "Which messages are committed?",
        "the lecture's question on messages 8, 10 and 11, answered by the live replicas, "
        "then a leader crash that keeps 8 and 10 and loses 11",
        "Kafka Reliability: Committed Messages",
    ),
    ScenarioInfo(
        "acks-1",
        "acks=1 loses acknowledged writes on failover",
        "an isolated leader keeps acknowledging acks=1 writes that a new leader never had",
        "Kafka Reliability: Example 1, the write anomaly",
    ),
    ScenarioInfo(
        "min-insync",
        "min.insync.replicas refuses writes it cannot protect",
        "with one broker down and min.insync.replicas=3, acks=all gets NotEnoughReplicas",
        "Kafka Reliability: Backoff, Not Enough Replicas",
    ),
    ScenarioInfo(
        "unclean",
        "Unclean leader election and the read anomaly",
        "an out-of-sync replica leads: committed records a consumer read are gone",
        "Kafka Reliability: Example 2, the read anomaly",
    ),
    ScenarioInfo(
        "idempotence",
        "A lost acknowledgement and the idempotent producer",
        "a retried write stands twice in the log; the idempotent producer's retry is "
        "suppressed by the broker",
        "Kafka Reliability: Exactly-Once Semantics, producer side",
    ),
    ScenarioInfo(
        "transactions",
        "An aborted transaction is invisible to read_committed",
        "a transfer's debit is written, then aborted: read_committed never sees it",
        "Kafka Reliability: Exactly-Once Semantics; Distribution Analysis: atomicity",
    ),
    ScenarioInfo(
        "consumer-group",
        "A consumer dies; its replacement takes over",
        "a group member is SIGKILLed mid-batch; its replacement reads on from the group's "
        "committed offsets: nothing missed, the dead one's uncommitted clicks processed again",
        "Kafka Reliability: Exactly-Once Semantics, consumer side",
    ),
    ScenarioInfo(
        "spark",
        "An exactly-once Spark pipeline survives a driver kill",
        "a Spark driver copying orders is SIGKILLed mid-batch and restarted from its "
        "checkpoint: the copy holds every order once",
        "Kafka Reliability: Exactly-Once Semantics, consumer side",
        needs="pyspark",
    ),
    ScenarioInfo(
        "controller",
        "The controller's own failover",
        "the active controller (which also leads the partition) is killed: the other two "
        "elect a new controller, which elects a new leader",
        "Apache Kafka - Distribution Analysis: the controller broker",
    ),
    ScenarioInfo(
        "replicated-service",
        "A replicated service on the log",
        "three replicas of a key-value store read one log in their own groups: they lag, "
        "disagree, survive a broker crash and converge",
        "Building Replicated Distributed Systems with Kafka",
    ),
)


def scenario_info(slug: str) -> ScenarioInfo:
    for info in SCENARIOS:
        if info.slug == slug:
            return info
    known = ", ".join(s.slug for s in SCENARIOS)
    raise KeyError(f"no scenario {slug!r} (kafkalite demo --list shows them: {known})")


def listing() -> list[str]:
    """``kafkalite demo --list``: one line per scenario."""
    width = max(len(s.slug) for s in SCENARIOS)
    return [
        f"{s.slug:<{width}}  {s.title}" + (f"  (needs {s.needs})" if s.needs else "")
        for s in SCENARIOS
    ]
