"""Cluster spec validation, its persistence, and the merged status snapshot."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalite.cluster.backend import BrokerState
from kafkalite.cluster.snapshot import merge_status
from kafkalite.cluster.spec import ClusterError, ClusterSpec, parse_configs

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
    assert p["replicas"] == [
        {"broker": 1, "log_end_offset": 10, "high_watermark": 8},
        {"broker": 2, "log_end_offset": 8, "high_watermark": 7},
        {"broker": 3, "log_end_offset": None, "high_watermark": None},
    ]
