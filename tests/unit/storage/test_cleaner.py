"""The log cleaner on a real disk: latest value per key, tombstones, transactions, limits.

Each test writes a compacted log through the leader's append path, cleans it as the broker
would (``log_to_clean`` then every step of ``clean``) and reads it back as a consumer does.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kafkalite.protocol.control_records import end_txn_marker_batch
from kafkalite.protocol.record_batch import InvalidBatchError, iter_batches, validate_produced
from kafkalite.protocol.records import Record, build_batch, decode_records, retain_records
from kafkalite.storage.cleaner import (
    CleanerStats,
    clean,
    first_dirty_offset,
    log_to_clean,
    needs_cleaning,
)
from kafkalite.storage.config import LogConfig
from kafkalite.storage.errors import InvalidRecordError
from kafkalite.storage.log import Log
from kafkalite.storage.producer_state import AppendOrigin
from kafkalite.storage.segment_swap import cleaned_path

pytestmark = pytest.mark.unit
NOW = 10_000_000_000_000  # ms: the files' real mtimes are far older
DAY = 86_400_000


def compacted(path: Path, **config: object) -> Log:
    settings = {"segment_bytes": 400, "cleanup_policy": "compact", **config}
    return Log.open(path, LogConfig(**settings), lambda: NOW)  # type: ignore[arg-type]


def put(log: Log, key: bytes, value: bytes | None, **batch: int | bool) -> int:
    data = build_batch([Record(key, value, 0)], **batch)  # type: ignore[arg-type]
    return log.append_as_leader(data, 0).first_offset


def run_pass(log: Log, last_stable_offset: int | None = None, now: int = NOW) -> CleanerStats:
    lso = log.log_end_offset if last_stable_offset is None else last_stable_offset
    to_clean = log_to_clean(log, lso, now)
    assert to_clean is not None
    stats = CleanerStats(to_clean.first_dirty_offset)
    for _ in clean(log, to_clean, now, stats):
        pass
    assert stats.completed
    return stats


def read_all(log: Log) -> list[tuple[int, bytes | None, bytes | None]]:
    """What a consumer reading from the log start sees: (offset, key, value)."""
    out: list[tuple[int, bytes | None, bytes | None]] = []
    position = log.log_start_offset
    while position < log.log_end_offset:
        data = log.read(position, 1 << 20, log.log_end_offset).records
        if not data:
            break
        for pos, header in iter_batches(data):
            out.extend((r.offset, r.key, r.value) for r in decode_records(data, pos))
            position = header.next_offset
    return out


def age(log: Log, ms: int) -> None:
    """Make every closed segment's last write ``ms`` older than ``NOW``."""
    seconds = (NOW - ms) / 1000
    for segment in log.segments[:-1]:
        os.utime(segment.log_path, (seconds, seconds))


def test_the_latest_value_per_key_stays_and_offsets_never_change(tmp_path: Path) -> None:
    log = compacted(tmp_path / "t-0")
    for version in range(5):
        for key in range(4):
            put(log, b"k%d" % key, b"v%d-%d" % (key, version))
    before = read_all(log)
    active = log.segments[-1].base_offset
    stats = run_pass(log)
    assert first_dirty_offset(log) == stats.end_offset == active
    # below the cleaned end: one record per key, the latest one there, at its own offset;
    # from there on (the active segment) every record as written
    latest = {key: (offset, value) for offset, key, value in before if offset < active}
    expected = sorted((o, k, v) for k, (o, v) in latest.items())
    expected += [r for r in before if r[0] >= active]
    assert read_all(log) == expected
    assert stats.records_removed == len(before) - len(expected)
    assert stats.bytes_after < stats.bytes_before


def test_a_cleaned_log_reopens_and_reads_through_its_gaps(tmp_path: Path) -> None:
    log = compacted(tmp_path / "t-0")
    for version in range(6):
        put(log, b"same", b"%d" % version)
    end = log.log_end_offset
    run_pass(log)
    log.close()
    reopened = compacted(tmp_path / "t-0")
    assert reopened.log_end_offset == end
    # a read from a removed offset gets the next surviving batch, even in a later segment
    data = reopened.read(0, 1 << 20, end).records
    assert data and next(iter_batches(data))[1].base_offset > 0


def test_tombstones_stay_for_delete_retention_ms_then_go(tmp_path: Path) -> None:
    log = compacted(tmp_path / "t-0", delete_retention_ms=DAY)
    put(log, b"gone", b"value")
    put(log, b"kept", b"value")
    put(log, b"gone", None)
    for filler in range(8):
        put(log, b"filler", b"%d" % filler)
    age(log, DAY // 2)
    run_pass(log)
    assert (b"gone", None) in [(k, v) for _, k, v in read_all(log)]  # too young to go
    age(log, 2 * DAY)
    for filler in range(8):
        put(log, b"filler", b"more-%d" % filler)
    stats = run_pass(log)
    keys = [k for _, k, _ in read_all(log)]
    assert b"gone" not in keys and b"kept" in keys
    assert stats.tombstones_removed == 1


def test_nothing_at_or_above_the_last_stable_offset_is_cleaned(tmp_path: Path) -> None:
    log = compacted(tmp_path / "t-0")
    for version in range(30):
        put(log, b"k", b"%d" % version)
    assert len(log.segments) > 4
    third = log.segments[2]
    stats = run_pass(log, last_stable_offset=third.base_offset + 1)  # inside the third
    assert stats.end_offset == third.base_offset  # whole segments below the LSO only
    offsets = [o for o, _, _ in read_all(log)]
    assert offsets == [third.base_offset - 1, *range(third.base_offset, log.log_end_offset)]


def test_the_dirty_ratio_decides_whether_a_log_is_cleaned(tmp_path: Path) -> None:
    log = compacted(tmp_path / "t-0", min_cleanable_dirty_ratio=0.9)
    for version in range(12):
        put(log, b"k", b"%d" % version)
    run_pass(log)
    put(log, b"k", b"new")  # a little dirt on a clean log
    for filler in range(3):
        put(log, b"k", b"again-%d" % filler)
    to_clean = log_to_clean(log, log.log_end_offset, NOW)
    assert to_clean is not None and to_clean.dirty_ratio < 0.9
    assert not needs_cleaning(log, to_clean, NOW)
    eager = compacted(tmp_path / "u-0", min_cleanable_dirty_ratio=0.0)
    for version in range(12):
        put(eager, b"k", b"%d" % version)
    to_clean = log_to_clean(eager, eager.log_end_offset, NOW)
    assert to_clean is not None and needs_cleaning(eager, to_clean, NOW)


def test_compact_and_delete_also_applies_retention(tmp_path: Path) -> None:
    log = compacted(
        tmp_path / "t-0", cleanup_policy="compact,delete", retention_bytes=1200, retention_ms=-1
    )
    for version in range(40):
        put(log, b"k%d" % (version % 3), b"v")
    assert log.enforce_retention(log.log_end_offset)
    assert log.log_start_offset > 0
    stats = run_pass(log)
    assert stats.first_dirty_offset == log.log_start_offset and stats.records_removed > 0


def test_an_idempotent_producers_last_batch_stays_so_its_retry_is_a_duplicate(
    tmp_path: Path,
) -> None:
    log = compacted(tmp_path / "t-0")
    idempotent = {"producer_id": 9, "producer_epoch": 0}
    last = put(log, b"k", b"first", base_sequence=0, **idempotent)
    for filler in range(10):
        put(log, b"k", b"later-%d" % filler)
    run_pass(log)
    retry = build_batch([Record(b"k", b"first", 0)], base_sequence=0, **idempotent)
    assert log.append_as_leader(retry, 0).duplicate_of == last


def test_aborted_records_go_and_markers_go_once_their_transaction_is_gone(
    tmp_path: Path,
) -> None:
    log = compacted(tmp_path / "t-0", delete_retention_ms=DAY)
    txn = {"producer_id": 5, "producer_epoch": 0, "transactional": True}
    coordinator = AppendOrigin.COORDINATOR
    put(log, b"aborted", b"x", base_sequence=0, **txn)
    log.append_as_leader(end_txn_marker_batch(5, 0, 0, False, 0), 0, coordinator)
    put(log, b"committed", b"y", base_sequence=1, **txn)
    log.append_as_leader(end_txn_marker_batch(5, 0, 0, True, 0), 0, coordinator)
    put(log, b"last", b"z", base_sequence=2, **txn)  # the producer's last batch: it stays
    log.append_as_leader(end_txn_marker_batch(5, 0, 0, True, 0), 0, coordinator)
    for filler in range(6):
        put(log, b"committed", b"plain-%d" % filler)
    age(log, 2 * DAY)
    stats = run_pass(log)
    seen = [(k, v) for _, k, v in read_all(log)]
    assert (b"aborted", b"x") not in seen and (b"committed", b"y") not in seen
    assert (b"last", b"z") in seen
    assert stats.aborted_records_removed == 1
    # the first two transactions left nothing: their markers go; the third's stays
    assert stats.markers_removed == 2
    assert log.collect_aborted_transactions(0, log.log_end_offset) == []


def test_an_abort_marker_stays_indexed_while_its_records_do(tmp_path: Path) -> None:
    log = compacted(tmp_path / "t-0")
    txn = {"producer_id": 5, "producer_epoch": 0, "transactional": True}
    put(log, b"aborted", b"x", base_sequence=0, **txn)  # the producer's last batch: it stays
    log.append_as_leader(end_txn_marker_batch(5, 0, 0, False, 0), 0, AppendOrigin.COORDINATOR)
    for filler in range(8):
        put(log, b"f", b"%d" % filler)
    run_pass(log)
    [aborted] = log.collect_aborted_transactions(0, log.log_end_offset)
    assert (aborted.producer_id, aborted.first_offset, aborted.last_offset) == (5, 0, 1)


def test_a_compacted_topic_refuses_records_without_a_key(tmp_path: Path) -> None:
    log = compacted(tmp_path / "t-0")
    with pytest.raises(InvalidRecordError, match="without key"):
        log.append_as_leader(build_batch([Record(None, b"v", 0)]), 0)


def test_a_crash_during_a_swap_is_finished_or_undone_on_open(tmp_path: Path) -> None:
    log = compacted(tmp_path / "t-0")
    for version in range(12):
        put(log, b"k", b"%d" % version)
    end = log.log_end_offset
    log.close()
    cleaned_path(tmp_path / "t-0", 0).write_bytes(b"half a copy")  # crashed while copying
    assert compacted(tmp_path / "t-0").log_end_offset == end
    assert not cleaned_path(tmp_path / "t-0", 0).exists()
    first = tmp_path / "t-0" / f"{0:020d}.log"
    batches = first.read_bytes()
    keep = next(iter_batches(batches))[1].size_in_bytes
    second = sorted(int(p.stem) for p in (tmp_path / "t-0").glob("*.log"))[1]
    swap = tmp_path / "t-0" / f"{0:020d}.{second:020d}.log.swap"  # the copy of segment 0
    swap.write_bytes(batches[:keep])  # crashed mid-swap
    reopened = compacted(tmp_path / "t-0")
    assert reopened.log_end_offset == end
    assert next(o for o, _, _ in read_all(reopened)) == 0


def test_a_follower_appends_a_compacted_leaders_batches_across_gaps(tmp_path: Path) -> None:
    follower = Log.open(tmp_path / "t-0", LogConfig(), lambda: NOW)
    follower.append_as_follower(build_batch([Record(b"a", b"1", 0)], base_offset=0))
    follower.append_as_follower(build_batch([Record(b"a", b"2", 0)], base_offset=7))
    assert follower.log_end_offset == 8


def test_a_batch_the_cleaner_thinned_is_replicated_and_recovered_whole(tmp_path: Path) -> None:
    """A cleaned batch keeps its offset range with fewer records (Kafka's too). A follower
    refused it ("lastOffsetDelta 2 does not match recordsCount 2") and fetched it forever,
    out of the ISR, and a broker restarted after a crash truncated its log there (lab 08's
    changelog, on a broker killed later). Only a produced batch must have one record per
    offset (Kafka's LogValidator.validateBatch checks it for clients only)."""
    written = [Record(b"a", b"1", 0), Record(b"b", b"1", 0), Record(b"a", b"2", 0)]
    thinned = retain_records(build_batch(written, base_offset=0), lambda r: r.offset > 0)
    assert thinned is not None
    follower = Log.open(tmp_path / "t-0", LogConfig(), lambda: NOW)
    follower.append_as_follower(thinned)
    assert follower.log_end_offset == 3
    # kill -9: no close(), so the reopened log recovers the active segment
    reopened = Log.open(tmp_path / "t-0", LogConfig(), lambda: NOW)
    assert reopened.log_end_offset == 3
    assert read_all(reopened) == [(1, b"b", b"1"), (2, b"a", b"2")]
    with pytest.raises(InvalidBatchError, match="does not match recordsCount"):
        validate_produced(thinned)
