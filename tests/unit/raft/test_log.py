"""The log's epoch cache, divergence answers and the memory log's crash model."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalite.raft import LogInvariantError, MemoryRaftLog, OffsetAndEpoch
from kafkalite.raft.log import ValidationKind
from kafkalite.raft.snapshot import FileSnapshotStore, Snapshot
from tests.unit.raft.helpers import entries

pytestmark = pytest.mark.unit


def log_with(*epochs: int) -> MemoryRaftLog:
    return MemoryRaftLog(entries=entries(*epochs))


def test_end_offset_for_epoch_is_where_the_next_epoch_starts() -> None:
    log = log_with(1, 1, 3, 3, 3, 5)
    assert log.epoch_entries() == [(1, 0), (3, 2), (5, 5)]
    assert log.end_offset_for_epoch(1) == OffsetAndEpoch(2, 1)
    assert log.end_offset_for_epoch(2) == OffsetAndEpoch(2, 1)  # largest epoch <= 2
    assert log.end_offset_for_epoch(3) == OffsetAndEpoch(5, 3)
    assert log.end_offset_for_epoch(9) == OffsetAndEpoch(6, 5)  # the latest ends at LEO
    assert log.end_offset_for_epoch(0) == OffsetAndEpoch(0, 0)


@pytest.mark.parametrize(
    ("offset", "epoch", "kind", "answer"),
    [
        (4, 3, ValidationKind.VALID, OffsetAndEpoch(4, 3)),
        (5, 3, ValidationKind.VALID, OffsetAndEpoch(5, 3)),
        (6, 3, ValidationKind.DIVERGING, OffsetAndEpoch(5, 3)),  # longer epoch 3 than ours
        (4, 2, ValidationKind.DIVERGING, OffsetAndEpoch(2, 1)),  # epoch 2 never led here
        (7, 5, ValidationKind.DIVERGING, OffsetAndEpoch(6, 5)),  # ahead of our LEO
    ],
)
def test_validate_offset_and_epoch(
    offset: int, epoch: int, kind: ValidationKind, answer: OffsetAndEpoch
) -> None:
    result = log_with(1, 1, 3, 3, 3, 5).validate_offset_and_epoch(offset, epoch)
    assert (result.kind, result.offset_and_epoch) == (kind, answer)


def test_truncate_to_end_offset_follows_kafka() -> None:
    follower = log_with(1, 1, 2, 2, 2)
    assert follower.truncate_to_end_offset(OffsetAndEpoch(2, 1)) == 2
    assert follower.last_offset_and_epoch() == OffsetAndEpoch(2, 1)
    assert follower.epoch_entries() == [(1, 0)]


def test_below_the_log_start_the_answer_is_the_snapshot() -> None:
    log = log_with(1, 1, 2, 2, 2)
    log.flush()
    assert log.create_snapshot(3, b"s") == OffsetAndEpoch(3, 2)
    assert log.log_start_offset == 3 and log.entry_at(2) is None
    assert log.epoch_entries() == [(2, 3)]
    snap = log.validate_offset_and_epoch(1, 1)
    assert (snap.kind, snap.offset_and_epoch) == (ValidationKind.SNAPSHOT, OffsetAndEpoch(3, 2))
    assert log.validate_offset_and_epoch(3, 2).kind is ValidationKind.VALID
    assert log.validate_offset_and_epoch(5, 2).kind is ValidationKind.VALID


def test_fetches_are_validated_without_going_to_the_snapshot_store(tmp_path: Path) -> None:
    """Every quorum Fetch asks for the latest snapshot id: the log keeps it, because the
    file store finds it by listing, reading and checksumming its files."""
    store = FileSnapshotStore(tmp_path)
    log = MemoryRaftLog(store, entries(1, 1, 2, 2, 2))
    log.flush()
    log.create_snapshot(3, b"s")
    store.latest = None  # type: ignore[assignment,method-assign]  # any call now fails
    assert log.validate_offset_and_epoch(1, 1).kind is ValidationKind.SNAPSHOT
    assert log.latest_snapshot_id() == OffsetAndEpoch(3, 2)
    log.truncate_to_snapshot(Snapshot(OffsetAndEpoch(9, 3), b"t"))  # one from the leader
    assert log.latest_snapshot_id() == OffsetAndEpoch(9, 3)
    assert MemoryRaftLog(FileSnapshotStore(tmp_path)).latest_snapshot_id() == OffsetAndEpoch(9, 3)


def test_a_crash_keeps_only_what_was_flushed() -> None:
    log = log_with(1, 1)
    log.flush()
    log.append_as_leader([b"lost"], 2)
    assert log.crash().last_offset_and_epoch() == OffsetAndEpoch(2, 1)
    log.flush()
    log.truncate_to(1)  # an unflushed truncation may come back
    assert log.crash().end_offset == 3
    log.flush()
    assert log.crash().end_offset == 1


def test_follower_appends_must_continue_the_log() -> None:
    log = log_with(1, 1)
    with pytest.raises(LogInvariantError):
        log.append_as_follower(entries(2, start=3))
    with pytest.raises(LogInvariantError):
        log.truncate_to(-1)
