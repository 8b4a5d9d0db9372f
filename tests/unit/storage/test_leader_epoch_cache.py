"""Leader-epoch cache: the answers OffsetForLeaderEpoch gives, and its durability."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalite.storage.leader_epoch_cache import UNDEFINED, LeaderEpochCache

pytestmark = pytest.mark.unit


def test_end_offsets_per_epoch(tmp_path: Path) -> None:
    cache = LeaderEpochCache(tmp_path / "leader-epoch-checkpoint")
    cache.assign(0, 0)
    cache.assign(2, 100)
    cache.assign(5, 150)
    assert cache.end_offset_for(0, 200) == (0, 100)
    assert cache.end_offset_for(1, 200) == (0, 100)  # unknown epoch: largest known below it
    assert cache.end_offset_for(2, 200) == (2, 150)
    assert cache.end_offset_for(5, 200) == (5, 200)
    assert cache.end_offset_for(9, 200) == (5, 200)
    assert LeaderEpochCache(tmp_path / "other").end_offset_for(0, 10) == UNDEFINED


def test_truncation_and_persistence(tmp_path: Path) -> None:
    path = tmp_path / "leader-epoch-checkpoint"
    cache = LeaderEpochCache(path)
    for epoch, start in ((0, 0), (1, 50), (3, 80)):
        cache.assign(epoch, start)
    cache.truncate_from_end(60)
    assert cache.entries == [(0, 0), (1, 50)]
    cache.truncate_from_start(55)
    assert LeaderEpochCache(path).entries == [(1, 55)]
    cache.assign(1, 99)  # an epoch already known is not moved
    assert cache.entries == [(1, 55)]
