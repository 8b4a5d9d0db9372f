"""Stopping brokers always ends in a controlled shutdown, in seconds, never in SIGKILL.

Seen before the fix: ``kafkalite stop`` on the active controller, right after another
broker had been stopped or restarted, took 10 s and ended in SIGKILL (the quorum driver
swallowed its cancellation), and the broker then read as ``stopped``. A broker that has
to be killed must read as killed (``dead``); one that stops on request must do so in
well under the supervisor's 10-s grace.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kafkalite.cluster import Cluster
from tests.support.cli import kafkalite
from tests.support.load import ProducerLoad
from tests.support.quorum import controller
from tests.support.topics import create_topic
from tests.support.waiting import wait_for

pytestmark = [pytest.mark.interop, pytest.mark.slow]

STOP_BOUND_S = 4.0


def shutdown_lines(cluster: Cluster, broker_id: int) -> list[str]:
    """What the broker logged of its last shutdown: each slow step, its total, its exit."""
    log = Path(cluster.spec.broker(broker_id).data_dir) / "broker.log"
    lines = log.read_text(errors="replace").splitlines()
    return [line for line in lines[-60:] if "shutdown" in line]


def state(cluster: Cluster, broker_id: int) -> str:
    return cluster.broker_states()[broker_id].value


@pytest.mark.timeout(900)
def test_twenty_controller_stops_under_load_each_end_in_seconds(
    make_cluster3: Callable[..., Cluster], topic: str
) -> None:
    cluster = make_cluster3()
    create_topic(cluster.bootstrap_servers, topic, 3, 3)
    slow_stops: list[str] = []
    with ProducerLoad(cluster.bootstrap_servers, topic) as load:
        for attempt in range(20):
            active = wait_for(lambda: controller(cluster), what="an active controller")
            other = next(b.broker_id for b in cluster.spec.brokers if b.broker_id != active)
            # what preceded every hang: another broker stopped (or restarted) just before
            cluster.stop(other)
            assert state(cluster, other) == "stopped", f"broker {other} was killed"
            if attempt % 2:
                cluster.start(other)
            active = wait_for(lambda: controller(cluster), what="an active controller")
            started, sent = time.monotonic(), time.strftime("%H:%M:%S")
            cluster.stop(active)
            took = time.monotonic() - started
            assert state(cluster, active) == "stopped", f"attempt {attempt}: {active} was killed"
            if took >= STOP_BOUND_S:
                said = "\n  ".join(shutdown_lines(cluster, active))
                slow_stops.append(f"attempt {attempt}: {took:.1f} s from {sent}\n  {said}")
            stopped = [b for b, s in cluster.broker_states().items() if s.value == "stopped"]
            for broker_id in stopped:
                cluster.start(broker_id, wait=False)
            for broker_id in stopped:
                cluster.wait_ready(broker_id)
        assert load.acked > 0
    assert not slow_stops, f"controller stops over {STOP_BOUND_S} s: {slow_stops}"


def test_down_stops_every_broker_at_once_without_killing_any(
    make_cluster3: Callable[..., Cluster], topic: str
) -> None:
    cluster = make_cluster3()
    create_topic(cluster.bootstrap_servers, topic, 3, 3)
    with ProducerLoad(cluster.bootstrap_servers, topic) as load:
        # traffic in flight when the brokers get SIGTERM together
        wait_for(lambda: load.acked >= 100, what="the load acknowledged")
        started = time.monotonic()
        cluster.down()
        took = time.monotonic() - started
    assert {s.value for s in cluster.broker_states().values()} == {"stopped"}, "one was killed"
    said = {b.broker_id: shutdown_lines(cluster, b.broker_id) for b in cluster.spec.brokers}
    assert took < STOP_BOUND_S, f"down took {took:.1f} s: {said}"
    links_log = (Path(cluster.spec.root) / "links.log").read_text()
    assert links_log == "", f"the link proxies were not quiet:\n{links_log}"


def test_a_stop_from_another_shell_ends_in_seconds(fresh_cluster: Cluster) -> None:
    """``kafkalite stop`` in a terminal, on a broker a notebook (here: this process)
    started: the stopped broker stays a zombie until its parent reaps it, which the stop
    once took for a process still running, waiting out its grace and then killing it."""
    stopped = kafkalite("stop", "1", "--dir", str(fresh_cluster.spec.root))
    assert stopped.returncode == 0, stopped.stderr
    assert "controlled shutdown" in stopped.stdout and "SIGKILL" not in stopped.stdout
    fresh_cluster.follow_other_shells()
    assert state(fresh_cluster, 1) == "stopped"


def test_a_broker_that_had_to_be_killed_reads_as_dead(fresh_cluster: Cluster) -> None:
    """A paused broker ignores SIGTERM until resumed; give it no time to finish."""
    fresh_cluster.pause(1)
    broker = fresh_cluster.spec.broker(1)
    fresh_cluster.backend.stop(broker, timeout_s=0)
    assert state(fresh_cluster, 1) == "dead"


def test_a_verb_in_one_shell_keeps_what_another_shell_did(
    make_cluster3: Callable[..., Cluster],
) -> None:
    """Two holders of one cluster, as a notebook's dashboard and a benchmark (or a
    terminal) are: one starts broker 1 again, the other, not having looked since, kills
    broker 2. The kill wrote back the whole cluster.json as its shell held it, broker 1's
    old pid with it, and from then on every shell took the running broker 1 for dead (a
    dashboard drew no leader for its partitions)."""
    terminal = make_cluster3()
    dashboard = Cluster.attach(Path(terminal.spec.root))
    terminal.kill(1)
    terminal.start(1)
    dashboard.kill(2)
    fresh = Cluster.attach(Path(terminal.spec.root))
    assert fresh.broker_states()[1].value == "running"
    assert fresh.broker_states()[2].value == "dead"
    terminal.follow_other_shells()
    terminal.start(2)
