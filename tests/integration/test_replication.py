"""Partition replication on three real brokers, driven by kafka-python and confluent-kafka.

What the reliability lecture claims, checked against processes that are really killed,
stopped and paused: acks=all writes survive the leader's death; an old leader's
uncommitted tail is truncated when it returns; min.insync.replicas refuses writes it
cannot protect; unclean election trades data for availability; a controlled shutdown and
a preferred-leader election move leadership without errors.
"""

from __future__ import annotations

import datetime
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import Consumer, ElectionType, Producer, TopicPartition
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
)
from kafka import KafkaConsumer, KafkaProducer
from kafka.errors import NotEnoughReplicasError
from kio.schema.fetch.v12 import request as fetch_req
from kio.schema.fetch.v12 import response as fetch_res

from kafkalite.cluster import Cluster
from kafkalite.protocol.errors import ErrorCode
from tests.support.raw import RawConnection
from tests.support.topics import create_topic as create
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.interop, pytest.mark.slow]


def create_topic(cluster: Cluster, partitions: int = 1, rf: int = 3, **configs: str) -> str:
    name = f"rep-{uuid.uuid4().hex[:8]}"
    create(cluster.bootstrap_servers, name, partitions, rf, configs)
    wait_for(lambda: len(partition_rows(cluster, name)) == partitions, what="topic in status")
    return name


def partition_rows(cluster: Cluster, topic: str) -> list[dict[str, Any]]:
    return [p for p in cluster.status()["partitions"] if p["topic"] == topic]


def partition(cluster: Cluster, topic: str, index: int = 0) -> dict[str, Any]:
    """The partition's row in ``status``; a broker too busy to answer leaves it out, so
    then an empty row (callers wait until what they need is there)."""
    rows = [p for p in partition_rows(cluster, topic) if p["partition"] == index]
    return rows[0] if rows else {"leader": None, "isr": [], "replicas": [], "leader_epoch": -1}


def fully_replicated(cluster: Cluster, topic: str, index: int = 0) -> dict[str, Any] | None:
    p = partition(cluster, topic, index)
    if not p["replicas"]:
        return None
    ends = {r["log_end_offset"] for r in p["replicas"]}
    ok = p["leader"] is not None and len(p["isr"]) == 3 and len(ends) == 1
    return p if ok and ends == {p["high_watermark"]} else None


def fetches_waiting(cluster: Cluster, topic: str, partitions: int) -> bool:
    """Every follower's Fetch of each partition waits at its leader (the leader's /state:
    it holds an idle follower's Fetch up to ``replica.fetch.wait.max.ms``)."""
    for index in range(partitions):
        leader = partition(cluster, topic, index)["leader"]
        state = cluster.introspect(leader) if leader is not None else None
        rows = [
            p
            for p in (state or {}).get("partitions", [])
            if (p["topic"], p["partition"]) == (topic, index)
        ]
        followers = rows[0]["followers"] if rows else []
        if len(followers) != 2 or not all(f["fetch_waiting"] for f in followers):
            return False
    return True


def consume_all(cluster: Cluster, topic: str, expected: int, timeout_s: float = 30) -> list[bytes]:
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": f"g-{uuid.uuid4().hex[:6]}",
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([topic])
    values: list[bytes] = []
    deadline = time.monotonic() + timeout_s
    idle_after_expected = 0
    try:
        while time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is None:
                if len(values) >= expected:
                    idle_after_expected += 1
                    if idle_after_expected >= 3:
                        break
                continue
            if message.error():
                continue
            values.append(message.value())
    finally:
        consumer.close()
    return values


def kill_offsets_leader(cluster: Cluster) -> None:
    """Kill the leader of (the one partition of) ``__consumer_offsets``, once replicated,
    and wait for its successor: kafka-python gives up on a coordinator it cannot reach."""
    offsets = wait_for(
        lambda: (q := partition(cluster, "__consumer_offsets")) and len(q["isr"]) == 3 and q,
        what="__consumer_offsets replicated",
    )
    cluster.kill(offsets["leader"])
    wait_for(
        lambda: partition(cluster, "__consumer_offsets")["leader"] not in (None, offsets["leader"]),
        what="a new leader for __consumer_offsets",
    )


def kafka_python_producer(cluster: Cluster, **settings: Any) -> KafkaProducer:
    return KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, **settings)


def test_acks_all_reaches_every_replica(cluster3: Cluster) -> None:
    topic = create_topic(cluster3, partitions=1, **{"min.insync.replicas": "2"})
    producer = kafka_python_producer(cluster3, acks="all")
    for i in range(100):
        producer.send(topic, b"kp-%d" % i)
    producer.flush(30)
    producer.close()
    confluent = Producer({"bootstrap.servers": cluster3.bootstrap_servers, "acks": "all"})
    errors: list[Any] = []
    for i in range(100):
        confluent.produce(topic, b"ck-%d" % i, on_delivery=lambda e, m: e and errors.append(e))
    confluent.flush(30)
    assert errors == []
    p = wait_for(lambda: fully_replicated(cluster3, topic), what="3 equal replicas")
    assert p["high_watermark"] == 200
    assert sorted(consume_all(cluster3, topic, 200)) == sorted(
        [b"kp-%d" % i for i in range(100)] + [b"ck-%d" % i for i in range(100)]
    )


def test_a_new_topic_is_fetched_at_once_though_the_followers_wait_at_its_leaders(
    cluster3: Cluster,
) -> None:
    """An idle follower's Fetch waits at each leader up to ``replica.fetch.wait.max.ms``
    (10 s). A topic created meanwhile must not wait for it: the follower abandons the held
    Fetch and asks for the new partitions at once. Waiting, it would not have fetched them
    for seconds, and each leader would have dropped it from the new ISRs after
    ``replica.lag.time.max.ms`` (1 s): the topic's first acks=all writes committed with
    one copy instead of three."""
    first = create_topic(cluster3, partitions=3)  # each broker leads one, the others follow
    wait_for(lambda: fetches_waiting(cluster3, first, 3), what="Fetches held at every leader")
    topic = create_topic(cluster3, partitions=3)
    producer = Producer({"bootstrap.servers": cluster3.bootstrap_servers, "acks": "all"})
    errors: list[Any] = []
    for index in range(3):
        producer.produce(
            topic, b"first", partition=index, on_delivery=lambda e, m: e and errors.append(e)
        )
    assert producer.flush(30) == 0
    assert errors == []
    for index in range(3):
        wait_for(lambda i=index: fully_replicated(cluster3, topic, i), what="3 equal replicas")
    shrunk = [e for e in cluster3.events() if e["type"] == "isr_shrunk" and e["topic"] == topic]
    assert shrunk == [], f"followers left the new topic's ISRs: {shrunk}"


def test_a_follower_killed_while_its_fetch_is_held_leaves_the_isr_after_the_lag_allowed(
    make_cluster3: Callable[..., Cluster],
) -> None:
    """A held Fetch counts as caught up while it waits at the log end. A follower killed
    meanwhile closes its connection, and the leader must stop counting that Fetch: with
    fencing slowed down (a raised ``broker.session.timeout.ms``), the follower leaves the
    ISR after ``replica.lag.time.max.ms`` (1 s), not when its 10-s wait would have ended."""
    cluster = make_cluster3(**{"broker.session.timeout.ms": "9000"})
    topic = create_topic(cluster, partitions=1)
    p = wait_for(lambda: fully_replicated(cluster, topic), what="3 equal replicas")
    follower = next(r for r in p["isr"] if r != p["leader"])
    wait_for(lambda: fetches_waiting(cluster, topic, 1), what="the Fetches held at the leader")
    cluster.kill(follower)
    killed = time.monotonic()
    wait_for(lambda: follower not in partition(cluster, topic)["isr"], what="the ISR to shrink")
    assert time.monotonic() - killed < 5, "the leader counted the dead follower's Fetch"


def test_killing_the_leader_loses_no_acknowledged_write(
    make_cluster3: Callable[..., Cluster],
) -> None:
    cluster = make_cluster3()
    topic = create_topic(cluster, **{"min.insync.replicas": "2"})
    producer = kafka_python_producer(cluster, acks="all", enable_idempotence=True)
    for i in range(100):
        producer.send(topic, b"%d" % i).get(timeout=30)
    before = wait_for(lambda: fully_replicated(cluster, topic), what="replicated")
    cluster.kill(before["leader"])
    for i in range(100, 200):
        producer.send(topic, b"%d" % i).get(timeout=30)  # retried until the new leader takes it
    producer.close()
    after = wait_for(
        lambda: (q := partition(cluster, topic))["leader"] not in (None, before["leader"]) and q,
        what="the new leader in status",
    )
    assert after["leader_epoch"] > before["leader_epoch"]
    values = consume_all(cluster, topic, 200)
    assert values == [b"%d" % i for i in range(200)]  # every ack, once, in order


@pytest.mark.parametrize(
    "slow_ms",
    [0, 3000],
    ids=["fast-link", "slow-link"],
)
def test_an_old_leaders_uncommitted_records_are_truncated(
    make_cluster3: Callable[..., Cluster], slow_ms: int
) -> None:
    """``slow-link``: the old leader comes back with its fetching slowed 3 s each way (the
    lab's ``slow`` fault), so each answer to it takes over 6 s. When the fetcher allowed
    5 s, its truncation request timed out, it reconnected and asked again, forever."""
    # A long lag time keeps the paused followers in the ISR, as a brief hiccup would.
    cluster = make_cluster3(
        **{"replica.lag.time.max.ms": "20000", "broker.session.timeout.ms": "2000"}
    )
    topic = create_topic(cluster)
    committed = kafka_python_producer(cluster, acks="all")
    for i in range(10):
        committed.send(topic, b"committed-%d" % i).get(timeout=30)
    committed.close()
    p = wait_for(lambda: fully_replicated(cluster, topic), what="replicated")
    old_leader = p["leader"]
    followers = [r for r in p["isr"] if r != old_leader]
    reckless = kafka_python_producer(cluster, acks=1, enable_idempotence=False, retries=0)
    reckless.partitions_for(topic)
    for f in followers:
        cluster.pause(f)
    try:
        for i in range(5):  # acknowledged by the leader alone, never replicated
            reckless.send(topic, b"doomed-%d" % i).get(timeout=10)
        cluster.kill(old_leader)
    finally:
        for f in followers:
            cluster.resume(f)
    reckless.close()
    wait_for(
        lambda: (q := partition(cluster, topic))["leader"] in followers and q,
        what="a follower to lead",
    )
    if slow_ms:
        cluster.slow(old_leader, slow_ms)
    cluster.start(old_leader)
    truncated = wait_for(
        lambda: [
            e
            for e in cluster.events()
            if e["type"] == "log_truncated" and e["topic"] == topic and e["broker"] == old_leader
        ],
        timeout_s=60,
        what="the old leader to truncate",
    )
    # The new leader's log ends where the truncation starts. A doomed record that was
    # already on its way to a follower when it was paused survives (as in Kafka); the rest
    # existed only on the old leader and is gone, though the producer was told "acked".
    kept = truncated[0]["from_offset"] - 10
    assert 0 <= kept < 5
    assert truncated[0]["to_offset"] == 15
    wait_for(lambda: fully_replicated(cluster, topic), 60, "replicas equal again")
    assert consume_all(cluster, topic, 10 + kept) == [b"committed-%d" % i for i in range(10)] + [
        b"doomed-%d" % i for i in range(kept)
    ]


def test_min_insync_replicas_refuses_writes_it_cannot_protect(
    make_cluster3: Callable[..., Cluster],
) -> None:
    cluster = make_cluster3()
    topic = create_topic(cluster, **{"min.insync.replicas": "3"})
    p = wait_for(lambda: fully_replicated(cluster, topic), what="replicated")
    # one follower stopped (controlled shutdown: it leaves the ISR at once); stopping both
    # would take two of the three controllers, and with them the quorum that shrinks the ISR
    follower = next(r for r in p["isr"] if r != p["leader"])
    cluster.stop(follower)
    wait_for(lambda: len(partition(cluster, topic)["isr"]) == 2, what="ISR of two")
    strict = kafka_python_producer(cluster, acks="all", retries=0, enable_idempotence=False)
    with pytest.raises(NotEnoughReplicasError):
        strict.send(topic, b"refused").get(timeout=20)
    strict.close()
    relaxed = kafka_python_producer(cluster, acks=1, enable_idempotence=False)
    relaxed.send(topic, b"accepted").get(timeout=20)  # acks=1 does not ask for replicas
    relaxed.close()


def test_unclean_election_trades_records_for_availability(
    make_cluster3: Callable[..., Cluster],
) -> None:
    cluster = make_cluster3()
    topic = create_topic(cluster, rf=2)
    p = wait_for(
        lambda: (q := partition(cluster, topic))["leader"] is not None and len(q["isr"]) == 2 and q,
        what="ISR of two",
    )
    leader = p["leader"]
    follower = next(r for r in p["isr"] if r != leader)
    producer = kafka_python_producer(cluster, acks="all", enable_idempotence=False)
    producer.send(topic, b"both-have-it").get(timeout=20)
    wait_for(
        lambda: {r["log_end_offset"] for r in partition(cluster, topic)["replicas"]} == {1},
        what="follower caught up",
    )
    cluster.stop(follower)
    wait_for(lambda: partition(cluster, topic)["isr"] == [leader], what="ISR of one")
    producer.send(topic, b"only-the-leader-has-it").get(timeout=20)
    producer.close()
    cluster.kill(leader)
    cluster.start(follower)
    # clean election refuses: the only in-sync replica is dead, so the partition is offline
    offline = wait_for(
        lambda: (q := partition(cluster, topic))["replicas"] and q["leader"] is None and q,
        what="partition offline",
    )
    assert offline["isr"] == [leader]
    admin = AdminClient({"bootstrap.servers": cluster.spec.broker(follower).address})
    resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
    resource.add_incremental_config(
        ConfigEntry(
            "unclean.leader.election.enable",
            "true",
            incremental_operation=AlterConfigOpType.SET,
        )
    )
    admin.incremental_alter_configs([resource])[resource].result(timeout=20)
    elected = wait_for(
        lambda: (q := partition(cluster, topic))["leader"] == follower and q,
        what="unclean leader",
    )
    assert elected["isr"] == [follower]
    assert any(
        e["type"] == "unclean_leader_elected" and e["topic"] == topic
        for e in (cluster.introspect(follower) or {}).get("events", [])
    )
    assert consume_all(cluster, topic, 1) == [b"both-have-it"]  # the second record is gone


def test_controlled_shutdown_moves_leadership_without_errors(
    make_cluster3: Callable[..., Cluster],
) -> None:
    cluster = make_cluster3()
    topic = create_topic(cluster, partitions=3, **{"min.insync.replicas": "2"})
    for i in range(3):
        wait_for(lambda i=i: fully_replicated(cluster, topic, i), what="replicated")
    producer = Producer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "acks": "all",
            "enable.idempotence": True,
            "linger.ms": 1,
        }
    )
    errors: list[Any] = []
    acked: list[bytes] = []
    stop = threading.Event()

    def run() -> None:
        i = 0
        while not stop.is_set():
            producer.produce(
                topic,
                b"%d" % i,
                on_delivery=lambda e, m: errors.append(e) if e else acked.append(m.value()),
            )
            producer.poll(0.005)
            i += 1
        producer.flush(30)

    writer = threading.Thread(target=run)
    writer.start()
    try:
        wait_for(lambda: len(acked) >= 50, what="writes under way")
        victim = wait_for(lambda: partition(cluster, topic, 0)["leader"], what="a leader")
        cluster.stop(victim)
        before = len(acked)
        wait_for(lambda: len(acked) >= before + 50, what="writes acknowledged after the stop")
    finally:
        stop.set()
        writer.join(60)
    assert errors == []
    for row in partition_rows(cluster, topic):
        assert row["leader"] != victim
        assert victim not in row["isr"]
    events = [e for e in cluster.events() if e["type"] == "leader_elected" and e["topic"] == topic]
    assert any(e["broker"] != victim for e in events)
    assert sorted(set(acked)) == sorted(acked)  # idempotence: no duplicates


def test_preferred_leader_election_moves_leadership_back(
    make_cluster3: Callable[..., Cluster],
) -> None:
    cluster = make_cluster3(**{"auto.leader.rebalance.enable": "false"})
    topic = create_topic(cluster)
    p = wait_for(lambda: fully_replicated(cluster, topic), what="replicated")
    preferred = p["replicas"][0]["broker"]
    assert p["leader"] == preferred
    cluster.restart(preferred)  # controlled shutdown moves the leadership away
    moved = wait_for(
        lambda: (q := fully_replicated(cluster, topic)) and q["leader"] != preferred and q,
        what="replicated again under another leader",
    )
    assert moved["leader"] != preferred
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    result = admin.elect_leaders(ElectionType.PREFERRED, [TopicPartition(topic, 0)]).result(
        timeout=20
    )
    assert result[TopicPartition(topic, 0)] is None  # no error
    back = wait_for(
        lambda: (q := partition(cluster, topic))["leader"] == preferred and q,
        what="preferred leader back",
    )
    assert back["leader_epoch"] > moved["leader_epoch"]

    # a consumer that still believes in an older leader epoch is fenced on Fetch, and the
    # student sees it in the leader's event stream
    stale = fetch_error(cluster, preferred, topic, current_leader_epoch=moved["leader_epoch"])
    assert stale == ErrorCode.fenced_leader_epoch
    future = fetch_error(cluster, preferred, topic, current_leader_epoch=back["leader_epoch"] + 5)
    assert future == ErrorCode.unknown_leader_epoch
    assert any(
        e["type"] == "request_fenced" and e["topic"] == topic
        for e in (cluster.introspect(preferred) or {}).get("events", [])
    )


def fetch_error(cluster: Cluster, broker: int, topic: str, current_leader_epoch: int) -> int:
    """The error of a raw Fetch v12 (kio-encoded, not the broker's code) for partition 0."""
    request = fetch_req.FetchRequest(
        cluster_id=None,
        replica_id=-1,
        max_wait=datetime.timedelta(milliseconds=0),
        min_bytes=1,
        max_bytes=1_000_000,
        isolation_level=0,
        session_id=0,
        session_epoch=-1,
        topics=(
            fetch_req.FetchTopic(
                topic=topic,
                partitions=(
                    fetch_req.FetchPartition(
                        partition=0,
                        current_leader_epoch=current_leader_epoch,
                        fetch_offset=0,
                        last_fetched_epoch=-1,
                        log_start_offset=-1,
                        partition_max_bytes=1_000_000,
                    ),
                ),
            ),
        ),
        forgotten_topics_data=(),
        rack_id="",
    )
    with RawConnection(cluster.spec.broker(broker).address) as conn:
        conn.send(request)
        _, response = conn.receive(fetch_res.FetchResponse)
    return int(response.responses[0].partitions[0].error_code)


def test_group_offsets_survive_the_failover_of_their_partition(
    make_cluster3: Callable[..., Cluster],
) -> None:
    cluster = make_cluster3()
    topic = create_topic(cluster)
    producer = kafka_python_producer(cluster, acks="all")
    for i in range(20):
        producer.send(topic, b"%d" % i)
    producer.flush(30)
    producer.close()
    group = f"g-{uuid.uuid4().hex[:6]}"

    def read_in_group(count: int, commit: bool) -> list[bytes]:
        consumer = KafkaConsumer(
            topic,
            bootstrap_servers=cluster.bootstrap_servers,
            group_id=group,
            auto_offset_reset="earliest",
            enable_auto_commit=False,
            consumer_timeout_ms=15_000,
        )
        values = []
        for message in consumer:
            values.append(message.value)
            if len(values) == count:
                break
        if commit:
            consumer.commit()
        consumer.close()
        return values

    assert read_in_group(12, commit=True) == [b"%d" % i for i in range(12)]
    kill_offsets_leader(cluster)
    assert read_in_group(8, commit=False) == [b"%d" % i for i in range(12, 20)]
