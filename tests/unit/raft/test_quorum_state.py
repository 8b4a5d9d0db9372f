"""Durable election state and the quorum's configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalite.raft import (
    ElectionState,
    FileQuorumStateStore,
    MemoryQuorumStateStore,
    RaftConfig,
)

pytestmark = pytest.mark.unit


def test_file_store_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "meta" / "quorum-state"
    store = FileQuorumStateStore(path)
    assert store.read() == ElectionState()
    store.write(ElectionState(7, voted_id=2, leader_id=2))
    assert FileQuorumStateStore(path).read() == ElectionState(7, 2, 2)
    assert [p.name for p in path.parent.iterdir()] == ["quorum-state"]  # no temp left


def test_memory_store_models_fsync() -> None:
    synced = MemoryQuorumStateStore()
    synced.write(ElectionState(3, voted_id=1))
    assert synced.crash().read() == ElectionState(3, voted_id=1)
    lying = MemoryQuorumStateStore(fsync=False)
    lying.write(ElectionState(3, voted_id=1))
    assert lying.read() == ElectionState(3, voted_id=1)
    assert lying.crash().read() == ElectionState()


def test_config_from_kafka_property_names() -> None:
    config = RaftConfig.from_properties(
        {
            "controller.quorum.election.timeout.ms": "1000",
            "controller.quorum.fetch.timeout.ms": "2000",
            "unrelated": "x",
        }
    )
    assert config.election_timeout_ms == 1000 and config.fetch_timeout_ms == 2000
    assert config.check_quorum_timeout_ms == 3000
    assert config.request_timeout_ms == RaftConfig().request_timeout_ms
