"""Cluster spec validation, its persistence, and the merged status snapshot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kafkalite.cluster import Cluster
from kafkalite.cluster.backend import BrokerState
from kafkalite.cluster.snapshot import merge_status
from kafkalite.cluster.spec import BrokerSpec, ClusterError, ClusterSpec, parse_configs

pytestmark = pytest.mark.unit


def test_spec_ports_dirs_and_round_trip(tmp_path: Path) -> None:
    spec = ClusterSpec.build(tmp_path, 3, 19092, {"num.partitions": "3"})
    assert spec.bootstrap_servers == "127.0.0.1:19092,127.0.0.1:19093,127.0.0.1:19094"
    assert [b.admin_port for b in spec.brokers] == [19192, 19193, 19194]
    assert spec.brokers[2].data_dir.endswith("broker-3")
    spec.save()
    assert ClusterSpec.load(tmp_path) == spec


@pytest.mark.parametrize(
    ("brokers", "port", "message"),
    [(0, 19092, "at least 1"), (1, 80, "outside"), (1, 70000, "outside")],
)
def test_invalid_specs(tmp_path: Path, brokers: int, port: int, message: str) -> None:
    with pytest.raises(ClusterError, match=message):
        ClusterSpec.build(tmp_path, brokers, port, {})


def test_config_pairs() -> None:
    assert parse_configs(["a=1", " b = x=y "]) == {"a": "1", "b": "x=y"}
    with pytest.raises(ClusterError, match="name=value"):
        parse_configs(["novalue"])
    with pytest.raises(ClusterError, match="no cluster"):
        ClusterSpec.load(Path("/nonexistent-kafkalite"))


def view(broker: int, leader: int, leo: int, hw: int) -> dict:
    return {
        "controller": broker == 1,
        "partitions": [
            {
                "topic": "t",
                "partition": 0,
                "leader": leader,
                "leader_epoch": 3,
                "isr": [1, 2],
                "replicas": [1, 2, 3],
                "log_start_offset": 0,
                "log_end_offset": leo,
                "high_watermark": hw,
                "last_stable_offset": hw,
            }
        ],
    }


def test_status_merges_leader_view_with_each_replica(tmp_path: Path) -> None:
    spec = ClusterSpec.build(tmp_path, 3, 19092, {})
    states = {1: BrokerState.RUNNING, 2: BrokerState.RUNNING, 3: BrokerState.DEAD}
    status = merge_status(spec, states, {1: view(1, 1, 10, 8), 2: view(2, 1, 8, 7), 3: None})
    assert [b["state"] for b in status["brokers"]] == ["running", "running", "dead"]
    assert status["brokers"][0]["controller"] is True
    p = status["partitions"][0]
    assert (p["leader"], p["high_watermark"], p["leader_epoch"]) == (1, 8, 3)
    rows = [
        (r["broker"], r["state"], r["in_isr"], r["leader_epoch"], r["log_start_offset"])
        for r in p["replicas"]
    ]
    assert rows == [
        (1, "running", True, 3, 0),
        (2, "running", True, 3, 0),
        (3, "dead", False, None, None),
    ]
    offsets = [(r["log_end_offset"], r["high_watermark"]) for r in p["replicas"]]
    assert offsets == [(10, 8), (8, 7), (None, None)]


def test_status_shows_loop_lag_slow_faults_and_the_leaders_producers(tmp_path: Path) -> None:
    spec = ClusterSpec.build(tmp_path, 3, 19092, {})
    states = {1: BrokerState.RUNNING, 2: BrokerState.RUNNING, 3: BrokerState.DEAD}
    producer = {"producer_id": 7, "producer_epoch": 0, "last_sequence": 4}
    leader = {**view(1, 1, 10, 8), "loop_lag_ms": 1200}
    leader["partitions"][0]["producers"] = [producer]
    follower = {**view(2, 1, 8, 7), "loop_lag_ms": 3}
    follower["partitions"][0]["producers"] = [{**producer, "last_sequence": 2}]
    status = merge_status(spec, states, {1: leader, 2: follower, 3: None}, {2: 500})
    brokers = [(b["id"], b["loop_lag_ms"], b["slow_ms"]) for b in status["brokers"]]
    assert brokers == [(1, 1200, None), (2, 3, 500), (3, None, None)]
    assert status["partitions"][0]["producers"] == [producer]  # the leader's, not a follower's


def test_brokers_reach_their_peers_only_through_link_proxies(tmp_path: Path) -> None:
    spec = ClusterSpec.build(tmp_path, 3, 19092, {})
    links = spec.links()
    assert len(links) == 12  # 3 x 2 directed pairs x (controller, replication)
    assert len({k.listen_port for k in links}) == 12
    configs = spec.broker_configs(2)
    voters = dict(v.split("@") for v in configs["controller.quorum.voters"].split(","))
    assert voters["2"] == "127.0.0.1:19293"  # its own controller listener
    to_1 = next(k for k in links if (k.src, k.dst, k.kind) == (2, 1, "controller"))
    assert voters["1"] == f"127.0.0.1:{to_1.listen_port}" and to_1.target_port == 19292
    fetch_from_3 = next(k for k in links if (k.src, k.dst, k.kind) == (2, 3, "replication"))
    assert f"3@127.0.0.1:{fetch_from_3.listen_port}" in configs["replica.fetch.endpoints"]
    assert fetch_from_3.target_port == 19094  # the leader's Kafka listener
    single = ClusterSpec.build(tmp_path / "one", 1, 19092, {})
    assert single.links() == []
    assert single.broker_configs(1)["controller.quorum.voters"] == "1@127.0.0.1:19292"


def test_status_quorum_comes_from_the_leader_with_each_voters_lag(tmp_path: Path) -> None:
    spec = ClusterSpec.build(tmp_path, 3, 19092, {})
    states = dict.fromkeys((1, 2, 3), BrokerState.RUNNING)
    voters = [
        {"id": 1, "log_end_offset": 20},
        {"id": 2, "log_end_offset": 18},
        {"id": 3, "log_end_offset": -1},
    ]
    leader = {
        "quorum": {
            "leader": 1,
            "epoch": 4,
            "high_watermark": 18,
            "log_end_offset": 20,
            "voters": voters,
        },
        "partitions": [],
    }
    follower = {
        "quorum": {
            "leader": 1,
            "epoch": 4,
            "high_watermark": 17,
            "log_end_offset": 18,
            "voters": None,
        },
        "partitions": [],
    }
    quorum = merge_status(spec, states, {1: leader, 2: follower, 3: None})["quorum"]
    assert quorum == {
        "leader": 1,
        "epoch": 4,
        "high_watermark": 18,
        "voters": [
            {"id": 1, "log_end_offset": 20, "lag": 0},
            {"id": 2, "log_end_offset": 18, "lag": 2},
            {"id": 3, "log_end_offset": -1, "lag": None},
        ],
    }
    no_leader = merge_status(spec, states, {1: None, 2: follower, 3: None})["quorum"]
    assert no_leader["voters"] == [] and no_leader["epoch"] == 4


def test_an_unreadable_cluster_file_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "cluster.json").write_text('{"root": "x", "brokers": [{"broker_id": 1}]}')
    with pytest.raises(ClusterError, match="not a cluster description"):
        ClusterSpec.load(tmp_path)


def test_status_transactions_come_from_leaders_and_the_newest_coordinator(tmp_path: Path) -> None:
    """Open and aborted transactions are the partition leader's view; a transactional id
    claimed by two brokers (an isolated old coordinator) belongs to the newer epoch."""
    spec = ClusterSpec.build(tmp_path, 3, 19092, {})
    states = dict.fromkeys((1, 2, 3), BrokerState.RUNNING)
    leader, follower = view(1, 1, 10, 10), view(2, 1, 10, 10)
    leader["partitions"][0]["open_transactions"] = [
        {"producer_id": 7, "producer_epoch": 0, "first_offset": 4}
    ]
    leader["partitions"][0]["aborted_transactions"] = [
        {"producer_id": 5, "first_offset": 1, "last_offset": 3}
    ]
    follower["partitions"][0]["open_transactions"] = []  # a follower's view is not shown

    def txn(state: str, coordinator: int, epoch: int) -> dict:
        return {
            "transactional_id": "tx",
            "producer_id": 7,
            "producer_epoch": 0,
            "state": state,
            "partitions": ["t-0"],
            "timeout_ms": 60_000,
            "start_time_ms": 1,
            "coordinator": coordinator,
            "coordinator_epoch": epoch,
        }

    leader["transactions"] = [txn("Ongoing", 1, 2)]
    follower["transactions"] = [txn("PrepareCommit", 2, 3)]
    status = merge_status(spec, states, {1: leader, 2: follower, 3: None})
    p = status["partitions"][0]
    assert p["open_transactions"] == [{"producer_id": 7, "producer_epoch": 0, "first_offset": 4}]
    assert p["aborted_transactions"] == [{"producer_id": 5, "first_offset": 1, "last_offset": 3}]
    assert [(t["state"], t["coordinator"]) for t in status["transactions"]] == [
        ("PrepareCommit", 2)
    ]


def test_status_shows_a_reassignment_under_way_as_its_leader_sees_it(tmp_path: Path) -> None:
    spec = ClusterSpec.build(tmp_path, 3, 19092, {})
    states = dict.fromkeys((1, 2, 3), BrokerState.RUNNING)
    moving = view(1, 1, 10, 8)
    moving["partitions"][0] |= {"adding_replicas": [3], "removing_replicas": [2]}
    status = merge_status(spec, states, {1: moving, 2: view(2, 1, 8, 7), 3: None})
    p = status["partitions"][0]
    assert (p["adding_replicas"], p["removing_replicas"]) == ([3], [2])
    settled = merge_status(spec, states, {1: view(1, 1, 10, 8), 2: None, 3: None})
    assert settled["partitions"][0]["adding_replicas"] == []


class PausedWhileAsked:
    """A backend whose broker 3 is paused while ``status`` waits for the answers: as when
    ``kafkalite pause 3`` runs in another shell during a ``status --watch`` frame."""

    def __init__(self) -> None:
        self.states = dict.fromkeys((1, 2, 3), BrokerState.RUNNING)

    def state(self, broker: BrokerSpec) -> BrokerState:
        return self.states[broker.broker_id]

    def isolated(self, spec: ClusterSpec) -> set[int]:
        return set()

    def slowed(self, spec: ClusterSpec) -> dict[int, int]:
        return {}

    def partially_partitioned(self, spec: ClusterSpec) -> set[int]:
        return set()


def test_a_broker_paused_while_status_asks_it_shows_as_paused(tmp_path: Path) -> None:
    spec = ClusterSpec.build(tmp_path, 3, 19092, {})
    backend = PausedWhileAsked()
    cluster = Cluster(spec, backend)  # type: ignore[arg-type]  (only what status reads)

    def introspect(broker_id: int, timeout_s: float) -> dict[str, Any] | None:
        if broker_id == 3:
            backend.states[3] = BrokerState.PAUSED  # SIGSTOP: its answer never comes
            return None
        return view(broker_id, 1, 10, 10)

    cluster.introspect = introspect  # type: ignore[method-assign]
    assert [b["state"] for b in cluster.status()["brokers"]] == ["running", "running", "paused"]
    backend.states[3] = BrokerState.RUNNING
    given = dict.fromkeys((1, 2, 3), BrokerState.RUNNING)
    assert cluster.status(states=given)["brokers"][2]["state"] == "running"  # as given
