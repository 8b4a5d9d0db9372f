"""The dashboard against a real three-broker cluster, without a browser: its buttons run
the real fault verbs off the caller's thread, a paused broker does not stop the refresh,
the producer panel's kafka-python producer and the topic panel's admin client really
write and configure, committed group offsets appear, and the event stream follows a
restarted broker."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource
from kafka import KafkaConsumer

from kafkalite.cluster import Cluster
from kafkalite.lab.dashboard import Dashboard
from tests.support.cli import kafkalite
from tests.support.topics import create_topic
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.labs, pytest.mark.slow]


def test_buttons_panels_and_a_paused_broker(make_cluster3: Callable[..., Cluster]) -> None:
    cluster = make_cluster3()
    create_topic(cluster.bootstrap_servers, "orders", 1, 3)
    dashboard = Dashboard(cluster)
    try:
        # producer panel: 20 idempotent acks=all sends, all acknowledged
        panel = dashboard.producer
        wait_for(lambda: panel.topic.value == "orders", what="the producer panel's topic")
        panel.idempotence.value = True
        panel.count.value = 20
        panel.produce.click()
        wait_for(lambda: panel.acked == 20, timeout_s=60, what="20 acknowledged sends")
        assert panel.failed == 0
        wait_for(
            lambda: all(
                r.log_end_offset == 20 for r in dashboard.state.partition("orders", 0).replicas
            ),
            what="every replica at offset 20",
        )

        # ... and continuously until switched off
        panel.continuous.value = True
        wait_for(lambda: panel.acked >= 40, timeout_s=60, what="continuous sends acknowledged")
        panel.continuous.value = False

        # topic panel: a new topic with its replication factor, shown at the next refresh
        topics = dashboard.topics
        topics.new_name.value = "payments"
        topics.new_partitions.value = 2
        topics.new_rf.value = 2
        topics.create.click()
        wait_for(
            lambda: {p.name for p in dashboard.state.partitions} >= {"payments-0", "payments-1"},
            what="the new topic on the dashboard",
        )
        assert all(
            len(p.replicas) == 2 for p in dashboard.state.partitions if p.topic == "payments"
        )

        # topic panel: min.insync.replicas through IncrementalAlterConfigs
        wait_for(lambda: topics.topic.value == "orders", what="the topic panel's topic")
        topics.min_isr.value = 3
        topics.apply.click()
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
        resource = ConfigResource(ConfigResource.Type.TOPIC, "orders")

        def min_isr() -> bool:
            configs = admin.describe_configs([resource])[resource].result(timeout=10)
            return configs["min.insync.replicas"].value == "3"

        wait_for(min_isr, what="min.insync.replicas=3")

        # pause a follower from its card: the refresh goes on, the card says paused
        leader = dashboard.state.partition("orders", 0).leader
        follower = next(b for b in (1, 2, 3) if b != leader)
        dashboard.cards[follower].buttons["pause"].click()
        wait_for(lambda: dashboard.state.broker(follower).state == "paused", what="paused")
        assert dashboard.cards[follower].buttons["resume"].disabled is False
        assert dashboard.cards[follower].buttons["kill"].disabled is False
        assert dashboard.cards[follower].buttons["stop"].disabled is True
        counted = dashboard.poller.refreshes
        started = time.monotonic()
        wait_for(lambda: dashboard.poller.refreshes >= counted + 4, what="4 more refreshes")
        # four refreshes, each bounded by its 1 s timeout and not by the paused broker
        assert time.monotonic() - started < 15
        assert dashboard.poller.last_error is None
        dashboard.cards[follower].buttons["resume"].click()
        wait_for(lambda: dashboard.state.broker(follower).state == "running", what="resumed")

        # a consumer group's committed offset becomes a marker on the partition
        consumer = KafkaConsumer(
            "orders",
            bootstrap_servers=cluster.bootstrap_servers,
            group_id="billing",
            auto_offset_reset="earliest",
            enable_auto_commit=False,
        )
        try:
            wait_for(lambda: consumer.poll(timeout_ms=500), what="records for the consumer")
            consumer.commit()
        finally:
            consumer.close()
        wait_for(
            lambda: any(
                g.group == "billing" for g in dashboard.state.partition("orders", 0).groups
            ),
            timeout_s=30,
            what="the group's committed offset on the dashboard",
        )
    finally:
        dashboard.close()


def test_a_new_dashboard_of_the_same_cluster_replaces_the_live_one(
    make_cluster3: Callable[..., Cluster],
) -> None:
    cluster = make_cluster3()
    first = Dashboard(cluster)
    second = Dashboard(Cluster.attach(cluster.spec.root))
    try:
        assert not first.poller.running and second.poller.running
        assert "not live: replaced by a newer dashboard" in first.status_line.value
        counted = first.poller.refreshes
        wait_for(lambda: second.poller.refreshes >= 3, what="the new dashboard refreshing")
        assert first.poller.refreshes == counted
    finally:
        first.close()
        second.close()


def test_a_broker_restarted_from_a_terminal_reads_running(
    make_cluster3: Callable[..., Cluster],
) -> None:
    """The notebook's cluster object was loaded before ``kafkalite start`` gave broker 2 a
    new process in another shell; the dashboard must follow, not report it dead."""
    cluster = make_cluster3()
    dashboard = Dashboard(cluster)
    try:
        root = cluster.spec.root
        assert kafkalite("kill", "2", "--dir", root).returncode == 0
        wait_for(lambda: dashboard.state.broker(2).state == "dead", what="broker 2 dead")
        started = kafkalite("start", "2", "--dir", root)
        assert started.returncode == 0, started.stderr
        wait_for(lambda: dashboard.state.broker(2).state == "running", what="broker 2 running")
        assert dashboard.cards[2].buttons["kill"].disabled is False
    finally:
        dashboard.close()


def test_event_stream_follows_a_restarted_broker(make_cluster3: Callable[..., Cluster]) -> None:
    cluster = make_cluster3()
    stream = cluster.event_stream()
    wait_for(lambda: stream.poll(cluster.broker_states()), what="the buffered history")
    assert stream.poll(cluster.broker_states()) == []  # nothing twice
    cluster.restart(3)

    def started_again() -> bool:
        events = stream.poll(cluster.broker_states())
        return any(e["type"] == "broker_started" and e["broker"] == 3 for e in events)

    # the new process numbers its events from 1 again: without started_ms the stream's
    # old cursor would skip them
    wait_for(started_again, what="broker 3's broker_started from its new process")
