"""``FileRaftLog`` and ``FileSnapshotStore``: round trips and crash recovery."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalite.raft import FileRaftLog, FileSnapshotStore, OffsetAndEpoch, Snapshot
from kafkalite.raft.file_log import LOG_FILE

pytestmark = pytest.mark.unit


def test_round_trip_rebuilds_entries_and_epoch_cache(tmp_path: Path) -> None:
    log = FileRaftLog(tmp_path)
    log.append_as_leader([b"a", b"b"], 1)
    log.append_as_leader([b"c"], 3, control=True)
    log.flush()
    log.close()
    again = FileRaftLog(tmp_path)
    assert [(e.offset, e.epoch, e.payload, e.control) for e in again.read(0, 10)] == [
        (0, 1, b"a", False),
        (1, 1, b"b", False),
        (2, 3, b"c", True),
    ]
    assert again.epoch_entries() == [(1, 0), (3, 2)]
    assert again.truncated_bytes == 0


def test_a_torn_tail_is_truncated_on_open(tmp_path: Path) -> None:
    log = FileRaftLog(tmp_path)
    log.append_as_leader([b"a", b"b", b"c"], 1)
    log.flush()
    log.close()
    path = tmp_path / LOG_FILE
    whole = path.read_bytes()
    path.write_bytes(whole[:-3])  # the last record was half written when we crashed
    again = FileRaftLog(tmp_path)
    assert again.end_offset == 2 and again.truncated_bytes > 0
    assert path.stat().st_size < len(whole) - 3
    again.append_as_leader([b"d"], 1)
    again.flush()
    again.close()
    assert [e.payload for e in FileRaftLog(tmp_path).read(0, 10)] == [b"a", b"b", b"d"]


def test_a_corrupt_record_ends_the_log(tmp_path: Path) -> None:
    log = FileRaftLog(tmp_path)
    log.append_as_leader([b"first", b"second", b"third"], 1)
    log.flush()
    log.close()
    path = tmp_path / LOG_FILE
    raw = bytearray(path.read_bytes())
    raw[raw.index(b"second")] ^= 0xFF  # bit rot in the middle record
    path.write_bytes(bytes(raw))
    assert [e.payload for e in FileRaftLog(tmp_path).read(0, 10)] == [b"first"]


def test_truncation_and_snapshot_survive_reopen(tmp_path: Path) -> None:
    log = FileRaftLog(tmp_path)
    log.append_as_leader([b"a", b"b", b"c", b"d"], 1)
    log.truncate_to(3)
    log.append_as_leader([b"x"], 2)
    log.flush()
    assert log.create_snapshot(2, b"state") == OffsetAndEpoch(2, 1)
    log.close()
    again = FileRaftLog(tmp_path)
    assert again.log_start_offset == 2
    assert [(e.offset, e.payload) for e in again.read(2, 10)] == [(2, b"c"), (3, b"x")]
    assert again.latest_snapshot_id() == OffsetAndEpoch(2, 1)


def test_snapshot_store_ignores_a_corrupt_snapshot(tmp_path: Path) -> None:
    store = FileSnapshotStore(tmp_path)
    store.save(Snapshot(OffsetAndEpoch(5, 1), b"older"))
    store.save(Snapshot(OffsetAndEpoch(9, 2), b"newer"))
    assert store.latest() == Snapshot(OffsetAndEpoch(9, 2), b"newer")
    newest = next(p for p in tmp_path.iterdir() if p.name.startswith("00000000000000000009"))
    newest.write_bytes(newest.read_bytes()[:-1] + b"!")
    assert store.latest() == Snapshot(OffsetAndEpoch(5, 1), b"older")
