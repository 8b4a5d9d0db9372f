"""How the active controller finds a dead broker, with real processes really killed,
paused and cut off (``controller.heartbeats``, ``broker.control_plane.controller_service``):

- a killed broker's connections are closed by its operating system, and the controller
  fences it at once (``broker_connection_closed``), without waiting out its session;
- a paused or isolated broker closes nothing: it is fenced once it has been silent for
  ``broker.session.timeout.ms`` (``broker_session_expired``), and unfenced when it returns.

Each test waits for the events, never for a fixed time.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from kafkalite.cluster import Cluster
from tests.support.quorum import controller
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.interop, pytest.mark.slow]

SESSION_MS = 3_000  # broker.session.timeout.ms's default


def fence_reasons(cluster: Cluster, broker_id: int, since_ms: int) -> list[dict[str, Any]]:
    """Why the active controller fenced ``broker_id`` after ``since_ms``."""
    kinds = ("broker_connection_closed", "broker_session_expired")
    return [
        e
        for e in cluster.events()
        if e["type"] in kinds and e.get("broker_id") == broker_id and e["time_ms"] >= since_ms
    ]


def about_broker_after(
    cluster: Cluster, kind: str, broker_id: int, since_ms: int
) -> dict[str, Any] | None:
    """The first event ``kind`` about ``broker_id`` at or after ``since_ms``."""
    return next(
        (
            e
            for e in cluster.events()
            if e["type"] == kind and e.get("broker_id") == broker_id and e["time_ms"] >= since_ms
        ),
        None,
    )


def a_follower_leading_a_partition(cluster: Cluster) -> tuple[int, str]:
    """A broker other than the active controller, and a topic whose partition it leads."""
    active = wait_for(lambda: controller(cluster), what="one active controller")
    victim = next(b.broker_id for b in cluster.spec.brokers if b.broker_id != active)
    topic = f"live-{uuid.uuid4().hex[:6]}"
    others = [b.broker_id for b in cluster.spec.brokers if b.broker_id != victim]
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap_servers})
    new = NewTopic(topic, 1, replica_assignment=[[victim, *others]])
    admin.create_topics([new])[topic].result(timeout=30)
    wait_for(lambda: leader_of(cluster, topic) == victim, what=f"{victim} leading {topic}")
    return victim, topic


def leader_of(cluster: Cluster, topic: str) -> int | None:
    rows = [p for p in cluster.status()["partitions"] if p["topic"] == topic]
    return rows[0]["leader"] if rows else None


def test_a_killed_broker_is_fenced_at_once_when_its_connection_closes(
    make_cluster3: Callable[..., Cluster],
) -> None:
    cluster = make_cluster3()
    victim, topic = a_follower_leading_a_partition(cluster)
    killed_ms = int(time.time() * 1000)
    cluster.kill(victim)
    fenced = wait_for(
        lambda: about_broker_after(cluster, "broker_fenced", victim, killed_ms), what="the fence"
    )
    [reason] = fence_reasons(cluster, victim, killed_ms)
    assert reason["type"] == "broker_connection_closed", reason
    assert reason["broker"] == controller(cluster)
    assert fenced["time_ms"] - killed_ms < SESSION_MS, "the fence waited out the session"
    new_leader = wait_for(
        lambda: (leader := leader_of(cluster, topic)) not in (None, victim) and leader,
        what="a new leader",
    )
    cluster.start(victim)  # registers again, with a new epoch, and is unfenced
    wait_for(lambda: leader_of(cluster, topic) is not None, what="a leader")
    assert new_leader != victim
    wait_for(
        lambda: about_broker_after(cluster, "broker_unfenced", victim, fenced["time_ms"]),
        what="the restarted broker unfenced",
    )


@pytest.mark.parametrize("silence", ["pause", "isolate"])
def test_a_silent_broker_is_fenced_by_its_session_and_unfenced_when_it_returns(
    make_cluster3: Callable[..., Cluster], silence: str
) -> None:
    """Paused (SIGSTOP) or cut off by the network, a broker's connections stay open: it
    is judged by its session, and by nothing else."""
    cluster = make_cluster3()
    victim, topic = a_follower_leading_a_partition(cluster)
    silenced_ms = int(time.time() * 1000)
    getattr(cluster, silence)(victim)
    try:
        fenced = wait_for(
            lambda: about_broker_after(cluster, "broker_fenced", victim, silenced_ms),
            30,
            "the fence",
        )
        [reason] = fence_reasons(cluster, victim, silenced_ms)
        assert reason["type"] == "broker_session_expired", reason
        assert reason["silent_ms"] > reason["session_ms"] == SESSION_MS
        wait_for(lambda: leader_of(cluster, topic) not in (None, victim), what="a new leader")
    finally:
        cluster.resume(victim) if silence == "pause" else cluster.heal(victim)
    wait_for(
        lambda: about_broker_after(cluster, "broker_unfenced", victim, fenced["time_ms"]),
        what="the returning broker unfenced",
    )


def test_status_shows_the_session_and_each_brokers_silence(
    make_cluster3: Callable[..., Cluster],
) -> None:
    """Only the active controller judges sessions: its ``/state`` has the session and each
    broker's silence, and ``status`` puts each silence on its broker's row. A paused
    broker's silence grows; the others' stay within the heartbeat interval or so."""
    cluster = make_cluster3()
    active = wait_for(lambda: controller(cluster), what="one active controller")
    victim = next(b.broker_id for b in cluster.spec.brokers if b.broker_id != active)
    views = {b: cluster.introspect(b) or {} for b in cluster.broker_states()}
    assert views[active]["broker_session_timeout_ms"] == SESSION_MS
    assert sorted(views[active]["broker_silence_ms"]) == ["1", "2", "3"]
    assert all(v["broker_session_timeout_ms"] is None for b, v in views.items() if b != active)
    cluster.pause(victim)
    try:
        status = wait_for(
            lambda: (
                (s := cluster.status())
                and (row := next(b for b in s["brokers"] if b["id"] == victim))["silent_ms"]
                and row["silent_ms"] >= 1_000
                and s
            ),
            what="the paused broker's silence to show",
        )
    finally:
        cluster.resume(victim)
    rows = {b["id"]: b for b in status["brokers"]}
    assert all(row["session_ms"] == SESSION_MS for row in rows.values())
    assert rows[victim]["silent_ms"] < 30_000
