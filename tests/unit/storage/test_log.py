"""The partition log on a real disk: appends, reads, rolls, recovery, retention."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kafkalite.protocol.record_batch import iter_batches
from kafkalite.protocol.records import Record, build_batch, decode_records
from kafkalite.storage.config import LogConfig
from kafkalite.storage.errors import (
    CorruptRecordError,
    InvalidRecordError,
    OffsetOutOfRangeError,
    OutOfOrderSequenceError,
    RecordTooLargeError,
)
from kafkalite.storage.log import Log
from kafkalite.storage.timestamp_lookup import offset_for_timestamp

pytestmark = pytest.mark.unit


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now


def batch(*values: bytes, ts: int = 0, **kwargs: int) -> bytes:
    return build_batch([Record(None, v, ts) for v in values], **kwargs)


def values(data: bytes) -> list[tuple[int, bytes | None]]:
    out = []
    for pos, _ in iter_batches(data):
        out.extend((r.offset, r.value) for r in decode_records(data, pos))
    return out


def open_log(path: Path, clock: Clock | None = None, **config: int) -> Log:
    return Log.open(path, LogConfig(**config), clock or Clock())


def test_append_assigns_offsets_and_reads_back(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    assert log.append_as_leader(batch(b"a", b"b"), leader_epoch=0).first_offset == 0
    info = log.append_as_leader(batch(b"c"), leader_epoch=0)
    assert (info.first_offset, info.last_offset) == (2, 2)
    assert log.log_end_offset == 3
    assert values(log.read(0, 1 << 20, 3).records) == [(0, b"a"), (1, b"b"), (2, b"c")]
    assert values(log.read(2, 1 << 20, 3).records) == [(2, b"c")]
    assert log.read(3, 1 << 20, 3).records == b""


def test_reads_stop_at_max_offset_and_max_bytes(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    for i in range(10):
        log.append_as_leader(batch(b"v%d" % i), 0)
    assert [o for o, _ in values(log.read(0, 1 << 20, 4).records)] == [0, 1, 2, 3]
    one = len(batch(b"v0"))
    assert len(values(log.read(0, one * 3, 10).records)) == 3
    # a batch larger than max_bytes still comes back whole when it is the first
    assert len(values(log.read(0, 1, 10).records)) == 1
    assert log.read(0, 1, 10, min_one_message=False).records == b""
    with pytest.raises(OffsetOutOfRangeError):
        log.read(11, 100, 10)


def test_corrupt_batch_writes_nothing(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    bad = bytearray(batch(b"x"))
    bad[-1] ^= 1
    with pytest.raises(CorruptRecordError):
        log.append_as_leader(bytes(bad), 0)
    assert log.log_end_offset == 0
    with pytest.raises(RecordTooLargeError):
        open_log(tmp_path / "u-0", max_message_bytes=100).append_as_leader(batch(b"x" * 200), 0)


def test_more_than_one_batch_is_invalid_record_and_writes_nothing(tmp_path: Path) -> None:
    """Kafka's Produce v3+ rule. Two batches of one idempotent producer, retried after a
    lost acknowledgement, used to be appended again (only single batches were checked
    as duplicates)."""
    log = open_log(tmp_path / "t-0")
    first = batch(b"a", producer_id=7, producer_epoch=0, base_sequence=0)
    second = batch(b"b", producer_id=7, producer_epoch=0, base_sequence=1)
    with pytest.raises(InvalidRecordError):
        log.append_as_leader(first + second, 0)
    with pytest.raises(InvalidRecordError):
        log.append_as_leader(first + second, 0)
    assert log.log_end_offset == 0


def test_segments_roll_and_lookups_cross_them(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", segment_bytes=1000, index_interval_bytes=100)
    for i in range(200):
        log.append_as_leader(batch(b"value-%03d" % i), 0)
    assert len(log.segments) > 5
    for offset in (0, 57, 120, 199):
        assert values(log.read(offset, 80, 200).records)[0] == (offset, b"value-%03d" % offset)
    assert sorted(p.name for p in (tmp_path / "t-0").glob("*.log"))[0] == "0" * 20 + ".log"


def test_recovery_truncates_a_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "t-0"
    log = open_log(path)
    for i in range(5):
        log.append_as_leader(batch(b"v%d" % i), 0)
    # kill -9 mid-write: no close(), half a batch at the end of the active segment
    segment = log.segments[-1].log_path
    with segment.open("ab") as f:
        f.write(batch(b"torn")[:30])
    reopened = open_log(path)
    assert reopened.log_end_offset == 5
    assert reopened.recovered_bytes_truncated == 30
    assert reopened.append_as_leader(batch(b"next"), 0).first_offset == 5
    assert values(reopened.read(0, 1 << 20, 6).records)[-1] == (5, b"next")


def test_recovery_truncates_at_a_corrupted_batch(tmp_path: Path) -> None:
    path = tmp_path / "t-0"
    log = open_log(path)
    sizes = [len(batch(b"v%d" % i)) for i in range(4)]
    for i in range(4):
        log.append_as_leader(batch(b"v%d" % i), 0)
    fd = os.open(log.segments[-1].log_path, os.O_RDWR)
    os.pwrite(fd, b"\xff", sizes[0] + sizes[1] + sizes[2] - 1)  # last byte of the third batch
    os.close(fd)
    assert open_log(path).log_end_offset == 2


def test_clean_shutdown_skips_recovery_and_keeps_everything(tmp_path: Path) -> None:
    path = tmp_path / "t-0"
    log = open_log(path, segment_bytes=500)
    for i in range(50):
        log.append_as_leader(batch(b"v%d" % i), 0)
    log.close()
    reopened = open_log(path, segment_bytes=500)
    assert reopened.log_end_offset == 50
    assert reopened.recovered_bytes_truncated == 0


def test_retention_by_bytes_and_time(tmp_path: Path) -> None:
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock, segment_bytes=500, retention_bytes=1000)
    for i in range(60):
        log.append_as_leader(batch(b"v%d" % i, ts=clock.now), 0)
    deleted = log.enforce_retention(log.log_end_offset)
    assert deleted and log.size_in_bytes - log.segments[0].size < 1000
    assert log.log_start_offset == log.segments[0].base_offset > 0
    timed = open_log(tmp_path / "u-0", clock, segment_bytes=500, retention_ms=10_000)
    for i in range(30):
        timed.append_as_leader(batch(b"v%d" % i, ts=clock.now), 0)
    assert timed.enforce_retention(timed.log_end_offset) == []
    clock.now += 60_000
    timed.append_as_leader(batch(b"fresh", ts=clock.now), 0)
    assert timed.enforce_retention(timed.log_end_offset)
    assert len(timed.segments) == 1  # the active segment is never deleted


def test_retention_never_deletes_above_the_high_watermark(tmp_path: Path) -> None:
    """Kafka's rule: a segment goes only when the next one starts at or below the HW."""
    clock = Clock()
    log = open_log(tmp_path / "t-0", clock, segment_bytes=500, retention_ms=10_000)
    for i in range(30):
        log.append_as_leader(batch(b"v%d" % i, ts=clock.now), 0)
    clock.now += 60_000
    second_base = log.segments[1].base_offset
    assert log.enforce_retention(high_watermark=second_base - 1) == []
    assert log.enforce_retention(high_watermark=second_base) == [0]
    assert log.log_start_offset == second_base


def test_delete_records_moves_the_log_start(tmp_path: Path) -> None:
    path = tmp_path / "t-0"
    log = open_log(path, segment_bytes=300)
    for i in range(40):
        log.append_as_leader(batch(b"v%d" % i), 0)
    assert log.maybe_increment_log_start_offset(25)
    assert log.log_start_offset == 25
    assert not log.maybe_increment_log_start_offset(20)  # it never moves back
    with pytest.raises(OffsetOutOfRangeError):
        log.read(10, 100, 40)
    assert values(log.read(25, 1 << 20, 40).records)[0][0] <= 25
    log.close()
    assert open_log(path, segment_bytes=300).log_start_offset == 25


def test_truncate_fully_and_start_at_the_leaders_log_start(tmp_path: Path) -> None:
    """A follower whose whole log lies below its leader's log start restarts empty there."""
    path = tmp_path / "t-0"
    log = open_log(path, segment_bytes=300)
    for i in range(40):
        log.append_as_leader(batch(b"v%d" % i), 3)
    log.truncate_fully_and_start_at(100)
    assert (log.log_start_offset, log.log_end_offset) == (100, 100)
    assert log.leader_epoch_cache.latest_epoch == -1
    assert [p.name for p in path.glob("*.log")] == ["00000000000000000100.log"]
    log.append_as_follower(build_batch([Record(None, b"x", 0)], base_offset=100))
    log.close()
    reopened = open_log(path, segment_bytes=300)
    assert (reopened.log_start_offset, reopened.log_end_offset) == (100, 101)


def test_a_log_start_beyond_the_log_end_finishes_an_interrupted_full_truncation(
    tmp_path: Path,
) -> None:
    path = tmp_path / "t-0"
    log = open_log(path)
    for i in range(5):
        log.append_as_leader(batch(b"v%d" % i), 0)
    log.close()
    (path / "log-start-offset").write_text("50\n")  # written first, then the crash
    reopened = open_log(path)
    assert (reopened.log_start_offset, reopened.log_end_offset) == (50, 50)


def test_offset_for_timestamp_finds_the_record_inside_a_batch(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(build_batch([Record(None, b"x", 100 + i * 10) for i in range(10)]), 0)
    assert offset_for_timestamp(log, 135) == (4, 140)
    assert offset_for_timestamp(log, 10_000) is None


def test_idempotent_retry_is_answered_with_the_original_offset(tmp_path: Path) -> None:
    path = tmp_path / "t-0"
    log = open_log(path)
    first = batch(b"a", b"b", producer_id=7, producer_epoch=0, base_sequence=0)
    log.append_as_leader(batch(b"other"), 0)
    assert log.append_as_leader(first, 0).first_offset == 1
    retry = log.append_as_leader(first, 0)
    assert retry.duplicate_of == 1 and (retry.first_offset, retry.last_offset) == (1, 2)
    assert log.log_end_offset == 3
    with pytest.raises(OutOfOrderSequenceError):
        log.append_as_leader(batch(b"gap", producer_id=7, producer_epoch=0, base_sequence=5), 0)
    # after a kill -9 and restart, the state is rebuilt from the log: still a duplicate
    again = open_log(path).append_as_leader(first, 0)
    assert again.duplicate_of == 1


def test_truncate_to_drops_the_tail_and_its_epochs(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", segment_bytes=300)
    for i in range(20):
        log.append_as_leader(batch(b"e0-%d" % i), 0)
    for i in range(10):
        log.append_as_leader(batch(b"e1-%d" % i), 1)
    assert log.leader_epoch_cache.end_offset_for(0, log.log_end_offset) == (0, 20)
    log.truncate_to(15)
    assert log.log_end_offset == 15
    assert log.leader_epoch_cache.latest_epoch == 0
    assert log.append_as_leader(batch(b"new"), 2).first_offset == 15
