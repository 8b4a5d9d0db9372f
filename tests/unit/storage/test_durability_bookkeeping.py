"""What a restart after ``kill -9`` has to read: the active segment, not the whole log.

A roll snapshots the producer state and has the closed segment fsynced in the background;
the next checkpoint moves the recovery point past it. Opening trusts the segments below
the recovery point (their indexes), recovers the rest in chunks and replays only what
follows the snapshot. Before, the recovery point moved only at a clean close, so every
crash re-validated and re-read the whole log.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from kafkalite.protocol.records import Record, build_batch
from kafkalite.storage import log_loader, recovery
from kafkalite.storage.config import LogConfig
from kafkalite.storage.log import Log
from kafkalite.storage.producer_snapshot import ProducerSnapshots
from kafkalite.storage.producer_state import ProducerStateManager
from kafkalite.storage.segment import LogSegment

pytestmark = pytest.mark.unit


def idempotent(seq: int, value: bytes, producer_id: int = 7) -> bytes:
    return build_batch(
        [Record(None, value, 1000 + seq)],
        producer_id=producer_id,
        producer_epoch=0,
        base_sequence=seq,
    )


def write_then_crash(path: Path, batches: int, segment_bytes: int = 600) -> Log:
    """Append (the broker's periodic checkpoint runs after), then drop the log without
    ``close()``: what ``kill -9`` leaves on disk."""
    log = Log.open(path, LogConfig(segment_bytes=segment_bytes), lambda: 0)
    for seq in range(batches):
        log.append_as_leader(idempotent(seq, b"value-%03d" % seq), 0)
    log.checkpoint_recovery_point()
    return log


def state_of(manager: ProducerStateManager) -> list[dict[str, object]]:
    return manager.describe()


def test_a_roll_checkpoints_the_recovery_point_and_snapshots_producer_state(
    tmp_path: Path,
) -> None:
    log = write_then_crash(tmp_path / "t-0", 40)
    active = log.segments[-1].base_offset
    assert len(log.segments) > 3
    assert log.recovery_point == active
    assert (tmp_path / "t-0" / "recovery-point").read_text().strip() == str(active)
    assert ProducerSnapshots(tmp_path / "t-0").offsets[-1] == active


def test_after_a_crash_only_the_active_segment_is_recovered_and_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = write_then_crash(tmp_path / "t-0", 40)
    recovered: list[int] = []
    replayed: list[int] = []
    recover = recovery.recover_segment

    def spy_recover(segment: LogSegment, interval: int) -> int:
        recovered.append(segment.base_offset)
        return recover(segment, interval)

    update = ProducerStateManager.update

    def spy_update(self: ProducerStateManager, header: object, marker: object = None) -> object:
        replayed.append(header.base_offset)  # type: ignore[attr-defined]
        return update(self, header, marker)  # type: ignore[arg-type]

    monkeypatch.setattr(log_loader, "recover_segment", spy_recover)
    monkeypatch.setattr(ProducerStateManager, "update", spy_update)
    after = Log.open(tmp_path / "t-0", LogConfig(segment_bytes=600), lambda: 0)
    active = before.segments[-1].base_offset
    assert recovered == [active]
    assert replayed and min(replayed) >= active
    assert after.log_end_offset == 40
    assert state_of(after.producer_state) == state_of(before.producer_state)
    # the restored state still recognises a retry of the last batch as a duplicate
    retry = after.append_as_leader(idempotent(39, b"value-039"), 0)
    assert retry.duplicate_of == 39


def test_a_clean_close_snapshots_at_the_log_end_and_replays_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_then_crash(tmp_path / "t-0", 10).close()
    replayed: list[int] = []
    update = ProducerStateManager.update
    monkeypatch.setattr(
        ProducerStateManager,
        "update",
        lambda self, header, marker=None: replayed.append(1) or update(self, header, marker),
    )
    reopened = Log.open(tmp_path / "t-0", LogConfig(segment_bytes=600), lambda: 0)
    assert replayed == []
    assert reopened.producer_state.producers[7].last_seq == 9


def test_truncation_reloads_producer_state_from_a_snapshot_below_the_new_end(
    tmp_path: Path,
) -> None:
    log = write_then_crash(tmp_path / "t-0", 40)
    reference = write_then_crash(tmp_path / "u-0", 25)
    log.truncate_to(25)
    assert all(o <= 25 for o in ProducerSnapshots(tmp_path / "t-0").offsets)
    assert state_of(log.producer_state) == state_of(reference.producer_state)
    assert log.append_as_leader(idempotent(25, b"next"), 0).first_offset == 25


def test_an_unreadable_snapshot_falls_back_to_an_older_one_or_a_replay(tmp_path: Path) -> None:
    before = write_then_crash(tmp_path / "t-0", 40)
    for offset in ProducerSnapshots(tmp_path / "t-0").offsets:
        (tmp_path / "t-0" / f"{offset:020d}.snapshot").write_text("{not json")
    after = Log.open(tmp_path / "t-0", LogConfig(segment_bytes=600), lambda: 0)
    assert state_of(after.producer_state) == state_of(before.producer_state)


def test_an_index_that_does_not_fit_its_segment_is_rebuilt(tmp_path: Path) -> None:
    write_then_crash(tmp_path / "t-0", 40).close()
    first = tmp_path / "t-0" / f"{0:020d}.index"
    first.write_bytes(first.read_bytes()[:-3])  # a torn entry
    reopened = Log.open(tmp_path / "t-0", LogConfig(segment_bytes=600), lambda: 0)
    assert [s.base_offset for s in reopened.segments][:2] == [0, reopened.segments[0].next_offset]
    assert reopened.log_end_offset == 40
    assert reopened.read(3, 1 << 20, 40).records  # lookups work through the rebuilt index


def test_recovery_reads_in_chunks_and_cuts_a_torn_tail_across_a_chunk_boundary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(recovery, "RECOVERY_CHUNK", 150)  # batches straddle chunk edges
    log = write_then_crash(tmp_path / "t-0", 12, segment_bytes=1 << 20)
    segment = log.segments[-1]
    whole = segment.size
    with segment.log_path.open("ab") as f:
        f.write(idempotent(12, b"torn")[:30])
    reopened = Log.open(tmp_path / "t-0", LogConfig(segment_bytes=1 << 20), lambda: 0)
    assert reopened.recovered_bytes_truncated == 30
    assert reopened.segments[-1].size == whole
    assert reopened.log_end_offset == 12


def test_the_recovery_point_moves_only_once_the_background_fsync_is_done(tmp_path: Path) -> None:
    with ThreadPoolExecutor(max_workers=1) as flusher:
        gate = threading.Event()
        flusher.submit(gate.wait)  # the flusher thread is busy: the roll's fsync waits
        log = Log.open(tmp_path / "t-0", LogConfig(segment_bytes=600), lambda: 0, flusher)
        for seq in range(8):
            log.append_as_leader(idempotent(seq, b"value-%03d" % seq), 0)
        assert len(log.segments) > 1
        log.checkpoint_recovery_point()
        assert log.recovery_point == 0
        gate.set()
        flusher.submit(lambda: None).result()  # everything queued before it has run
        log.checkpoint_recovery_point()
        assert log.recovery_point == log.segments[-1].base_offset
        log.close()


def test_a_pending_fsync_of_truncated_data_never_moves_the_recovery_point(
    tmp_path: Path,
) -> None:
    with ThreadPoolExecutor(max_workers=1) as flusher:
        gate = threading.Event()
        flusher.submit(gate.wait)
        log = Log.open(tmp_path / "t-0", LogConfig(segment_bytes=600), lambda: 0, flusher)
        for seq in range(8):
            log.append_as_leader(idempotent(seq, b"value-%03d" % seq), 0)
        log.truncate_to(1)
        gate.set()
        flusher.submit(lambda: None).result()
        log.checkpoint_recovery_point()
        assert log.recovery_point <= 1
        log.close()
