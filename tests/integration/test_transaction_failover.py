"""Transactions under failures, with real processes: kill -9 (a) the transaction
coordinator (the leader of the ``__transaction_state`` partition), (b) a data partition's
leader, (c) the active controller, at each phase of a commit:

- *before EndTxn*: records written, the commit not yet asked for;
- *after PrepareCommit*: the decision is in the transaction log, no marker written yet;
- *between markers*: one partition has its commit marker, another not yet.

The protocol is held at a phase by a real fault, not a hook in the broker: ``slow`` on the
coordinator's broker delays every request it sends to other brokers, its WriteTxnMarkers
included, while a marker for a partition it leads itself is written at once. So with the
transaction on two partitions led elsewhere, PrepareCommit is written and no marker is;
with one of them led by the coordinator, that one is marked and the other waits.

Whatever is killed, the transaction must end the same way on every partition (committed,
or - if the producer was told to abort - aborted), a read_committed consumer must never see
part of it on a partition that has no marker yet, a new leader must report the right last
stable offset, and the producer's next transaction must work.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from confluent_kafka import KafkaException, Producer
from kafka import KafkaProducer

from kafkalite.cluster import Cluster
from tests.support.transactions import (
    confluent_read,
    coordinator_broker,
    create_led_topic,
    write_sentinels,
)
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.interop, pytest.mark.slow]

TOPIC = "payments"
HOLD_MS = 4000  # how long the slowed coordinator's marker requests are held, each way
RECORDS = 5


def partition(status: dict[str, Any], index: int, topic: str = TOPIC) -> dict[str, Any] | None:
    """The partition in one ``Cluster.status()`` snapshot (None if no replica answered)."""
    return next(
        (p for p in status["partitions"] if (p["topic"], p["partition"]) == (topic, index)), None
    )


def transaction(status: dict[str, Any], txn_id: str) -> dict[str, Any] | None:
    return next((t for t in status["transactions"] if t["transactional_id"] == txn_id), None)


def is_open(state: dict[str, Any] | None) -> bool:
    """Its leader reports the transaction open on it (no marker yet)."""
    return state is not None and bool(state["open_transactions"])


def is_marked(state: dict[str, Any] | None) -> bool:
    """Its leader reports no open transaction (a partition whose leader did not answer
    lists none, which says nothing)."""
    return state is not None and state["leader"] is not None and not state["open_transactions"]


def controller(cluster: Cluster) -> int:
    return wait_for(
        lambda: next((b["id"] for b in cluster.status()["brokers"] if b["controller"]), None),
        20,
        "an active controller",
    )


def produce_transaction(producer: Producer, partitions: list[int], tag: str) -> None:
    producer.begin_transaction()
    for p in partitions:
        for i in range(RECORDS):
            producer.produce(TOPIC, f"{tag}-{p}-{i}".encode(), partition=p)
    assert producer.flush(60) == 0


def end(producer: Producer) -> str:
    """Commit; if the producer is told the transaction cannot commit, abort it."""
    try:
        producer.commit_transaction(90)
    except KafkaException as exc:
        if not exc.args[0].txn_requires_abort():
            raise
        producer.abort_transaction(90)
        return "abort"
    return "commit"


def hold_markers(cluster: Cluster, txn_id: str, held: int, marked: int | None) -> None:
    """Wait until PrepareCommit is decided, partition ``held`` still has the transaction
    open (no marker) and ``marked`` (if any) has its marker; check that a read_committed
    reader does not see past the open transaction.

    The phase lasts about ``HOLD_MS`` (until the held marker arrives), so it is observed
    and checked in one status snapshot: a second one may come after the marker."""

    def phase() -> dict[str, Any] | None:
        status = cluster.status()
        txn = transaction(status, txn_id)
        if txn is None or txn["state"] != "PrepareCommit":
            return None
        if marked is not None and not is_marked(partition(status, marked)):
            return None
        state = partition(status, held)
        return state if is_open(state) else None

    state = wait_for(phase, 30, f"PrepareCommit with partition {held} still unmarked")
    assert state["last_stable_offset"] == state["open_transactions"][0]["first_offset"]


@pytest.mark.parametrize("target", ["coordinator", "data_leader", "controller"])
@pytest.mark.parametrize("phase", ["before_end_txn", "after_prepare_commit", "between_markers"])
def test_a_transaction_ends_the_same_way_everywhere(
    make_cluster3: Any, phase: str, target: str
) -> None:
    cluster = make_cluster3()
    bootstrap = cluster.bootstrap_servers
    txn_id = f"tx-{uuid.uuid4().hex[:8]}"
    coordinator = coordinator_broker(cluster, txn_id)
    others = [b for b in (1, 2, 3) if b != coordinator]
    create_led_topic(cluster, TOPIC, [coordinator, *others])  # P0 on the coordinator, P1, P2 not
    # PrepareCommit with no marker: both partitions led elsewhere; between markers: P0 is
    # marked by the coordinator itself at once, P1 waits
    partitions = [1, 2] if phase == "after_prepare_commit" else [0, 1]
    held = partitions[-1]
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id})
    producer.init_transactions(60)
    produce_transaction(producer, partitions, "warm-up")
    producer.commit_transaction(60)

    produce_transaction(producer, partitions, "txn")
    if phase == "before_end_txn":
        victim = _victim(cluster, target, coordinator, held)
        cluster.kill(victim)
        outcome = end(producer)
    else:
        cluster.slow(coordinator, HOLD_MS)
        producer.commit_transaction(60)  # answered once PrepareCommit is in the log
        hold_markers(cluster, txn_id, held, 0 if phase == "between_markers" else None)
        victim = _victim(cluster, target, coordinator, held)
        cluster.kill(victim)
        outcome = "commit"
        if target == "data_leader":
            _check_new_leader_holds_back(cluster, victim, held)

    cluster.heal()
    cluster.start(victim)
    final = "CompleteCommit" if outcome == "commit" else "CompleteAbort"
    wait_for(
        lambda: (t := transaction(cluster.status(), txn_id)) is not None and t["state"] == final,
        60,
        f"the transaction to reach {final}",
    )

    def all_marked() -> bool:
        status = cluster.status()
        return all(is_marked(partition(status, p)) for p in partitions)

    wait_for(all_marked, 60, "every partition to have its marker")

    produce_transaction(producer, partitions, "next")  # the producer goes on
    producer.commit_transaction(60)
    write_sentinels(bootstrap, TOPIC, 3)
    seen = confluent_read(bootstrap, TOPIC, 3, "read_committed", timeout_s=60)
    for p in partitions:
        expected = [f"warm-up-{p}-{i}".encode() for i in range(RECORDS)]
        if outcome == "commit":
            expected += [f"txn-{p}-{i}".encode() for i in range(RECORDS)]
        expected += [f"next-{p}-{i}".encode() for i in range(RECORDS)]
        assert seen[p] == expected, f"partition {p} after {outcome}"


def _victim(cluster: Cluster, target: str, coordinator: int, held: int) -> int:
    if target == "coordinator":
        return coordinator
    if target == "data_leader":
        return int(
            wait_for(
                lambda: (p := partition(cluster.status(), held)) and p["leader"],
                20,
                f"the leader of partition {held}",
            )
        )
    return controller(cluster)


def _check_new_leader_holds_back(cluster: Cluster, old_leader: int, held: int) -> None:
    """The replica that takes over the unmarked partition rebuilt the open transaction from
    its own log: its last stable offset stops at the transaction's first record."""

    def new_leader() -> dict[str, Any] | None:
        state = partition(cluster.status(), held)
        leader = state and state["leader"]
        return state if leader is not None and leader != old_leader else None

    state = wait_for(new_leader, 30, f"a new leader for partition {held}")
    if state["open_transactions"]:  # (the marker may already have reached it)
        assert state["last_stable_offset"] == state["open_transactions"][0]["first_offset"]


def test_kafka_python_commits_through_a_coordinator_failover(make_cluster3: Any) -> None:
    """The students' client: its coordinator is killed after PrepareCommit, with no marker
    written; the next coordinator finishes the commit on its own.

    kafka-python 3.0.12 itself does not carry on after losing its coordinator: it finds the
    new one but never sends AddPartitionsToTxn again, so its next transaction's records
    expire (README, Known limits). What an application does instead is start a new
    producer with the same ``transactional.id``, which is what is tested here."""
    cluster = make_cluster3()
    bootstrap = cluster.bootstrap_servers
    txn_id = f"tx-{uuid.uuid4().hex[:8]}"
    coordinator = coordinator_broker(cluster, txn_id)
    others = [b for b in (1, 2, 3) if b != coordinator]
    create_led_topic(cluster, TOPIC, [coordinator, *others])
    producer = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id)
    producer.init_transactions()
    producer.begin_transaction()
    for i in range(RECORDS):
        producer.send(TOPIC, b"txn-%d" % i, partition=1)
    cluster.slow(coordinator, HOLD_MS)
    producer.commit_transaction()
    hold_markers(cluster, txn_id, held=1, marked=None)
    cluster.kill(coordinator)
    cluster.heal()
    producer.close(timeout=5)
    wait_for(
        lambda: (t := transaction(cluster.status(), txn_id)) and t["state"] == "CompleteCommit",
        60,
        "the new coordinator to complete the commit",
    )
    successor = KafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id)
    successor.init_transactions()
    successor.begin_transaction()
    successor.send(TOPIC, b"next", partition=1).get(60)
    successor.commit_transaction()
    successor.close()
    cluster.start(coordinator)
    write_sentinels(bootstrap, TOPIC, 3)
    seen = confluent_read(bootstrap, TOPIC, 3, "read_committed", timeout_s=60)
    assert seen[1] == [b"txn-%d" % i for i in range(RECORDS)] + [b"next"]
