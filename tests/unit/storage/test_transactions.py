"""The partition side of transactions on a real disk: open transactions bound the last
stable offset, markers end them, aborted ones are indexed per segment in ``.txnindex``,
and that index survives a clean restart, recovery after kill -9 and truncation."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalite.protocol.control_records import end_txn_marker_batch
from kafkalite.protocol.record_batch import parse_header
from kafkalite.protocol.records import Record, build_batch
from kafkalite.storage.config import LogConfig
from kafkalite.storage.errors import (
    InvalidProducerEpochError,
    InvalidRecordError,
    InvalidTxnStateError,
    TransactionCoordinatorFencedError,
)
from kafkalite.storage.log import Log
from kafkalite.storage.producer_state import AppendOrigin
from kafkalite.storage.txn_index import AbortedTxn

pytestmark = pytest.mark.unit
COORDINATOR = AppendOrigin.COORDINATOR


def txn_batch(pid: int, seq: int, *values: bytes, epoch: int = 0) -> bytes:
    return build_batch(
        [Record(None, v, 0) for v in values],
        producer_id=pid,
        producer_epoch=epoch,
        base_sequence=seq,
        transactional=True,
    )


def plain(*values: bytes) -> bytes:
    return build_batch([Record(None, v, 0) for v in values])


def marker(pid: int, committed: bool, epoch: int = 0, coordinator_epoch: int = 0) -> bytes:
    return end_txn_marker_batch(pid, epoch, coordinator_epoch, committed, 0)


def open_log(path: Path, **config: int) -> Log:
    return Log.open(path, LogConfig(**config), lambda: 1_000)


def test_an_open_transaction_bounds_the_stable_offset_until_its_marker_is_replicated(
    tmp_path: Path,
) -> None:
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(plain(b"before"), 0)  # offset 0
    log.append_as_leader(txn_batch(7, 0, b"a", b"b"), 0)  # offsets 1-2
    log.append_as_leader(plain(b"other"), 0)  # offset 3
    state = log.producer_state
    assert state.first_unstable_offset(high_watermark=4) == 1
    log.append_as_leader(marker(7, committed=True), 0, COORDINATOR)  # offset 4
    # ended, but a read_committed consumer waits until every replica has the marker
    assert state.first_unstable_offset(high_watermark=4) == 1
    assert state.first_unstable_offset(high_watermark=5) is None
    assert log.collect_aborted_transactions(0, 5) == []  # a commit is not indexed


def test_an_abort_is_indexed_in_the_segment_of_its_marker(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(txn_batch(7, 0, b"a"), 0)  # 0
    log.append_as_leader(txn_batch(8, 0, b"x"), 0)  # 1: another producer's open txn
    log.append_as_leader(txn_batch(7, 1, b"b"), 0)  # 2
    log.append_as_leader(marker(7, committed=False), 0, COORDINATOR)  # 3
    aborted = AbortedTxn(producer_id=7, first_offset=0, last_offset=3, last_stable_offset=1)
    assert log.collect_aborted_transactions(0, 4) == [aborted]
    assert log.collect_aborted_transactions(1, 2) == [aborted]  # overlaps the range
    assert log.collect_aborted_transactions(4, 10) == []  # ended before the range
    assert log.producer_state.first_unstable_offset(high_watermark=4) == 1  # 8 still open
    assert (tmp_path / "t-0" / ("0" * 20 + ".txnindex")).stat().st_size == 34


def test_the_index_survives_a_clean_restart_and_is_rebuilt_by_recovery(tmp_path: Path) -> None:
    path = tmp_path / "t-0"
    log = open_log(path, segment_bytes=300)
    for i in range(6):
        log.append_as_leader(txn_batch(i, 0, b"v%d" % i), 0)
        log.append_as_leader(marker(i, committed=i % 2 == 0), 0, COORDINATOR)
    assert len(log.segments) > 2
    expected = log.collect_aborted_transactions(0, 100)
    assert [t.producer_id for t in expected] == [1, 3, 5]
    log.close()
    assert open_log(path, segment_bytes=300).collect_aborted_transactions(0, 100) == expected

    # kill -9 (no close) with a stale index file and a torn tail that cuts the last marker
    crashed = open_log(path, segment_bytes=300)
    last = crashed.segments[-1]
    last.txn_index.path.write_bytes(b"\x00\x00garbage")
    size = last.size
    with last.log_path.open("r+b") as f:
        f.truncate(size - 10)
    (path / "recovery-point").write_text("0\n")
    recovered = open_log(path, segment_bytes=300)
    assert [t.producer_id for t in recovered.collect_aborted_transactions(0, 100)] == [1, 3]
    assert [t.producer_id for t in recovered.producer_state.ongoing_transactions()] == [5]


def test_a_transaction_open_at_a_restart_still_bounds_the_stable_offset(tmp_path: Path) -> None:
    """A clean close snapshots the producer state and the reopened log replays nothing: the
    open transaction must come back from the snapshot (it came back as the producer's
    ``current_txn_first_offset`` only, and read_committed readers of the restarted broker,
    once it led again, read records that were aborted later)."""
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(plain(b"before"), 0)  # 0
    log.append_as_leader(txn_batch(7, 0, b"a", b"b"), 0)  # 1-2, open
    log.append_as_leader(plain(b"after"), 0)  # 3
    log.close()
    reopened = open_log(tmp_path / "t-0")
    state = reopened.producer_state
    assert state.first_unstable_offset(high_watermark=4) == 1
    assert [t.first_offset for t in state.ongoing_transactions()] == [1]
    reopened.append_as_leader(marker(7, committed=False), 0, COORDINATOR)  # 4
    assert state.first_unstable_offset(high_watermark=5) is None


def test_truncation_forgets_aborts_whose_marker_is_cut(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(txn_batch(7, 0, b"a"), 0)
    log.append_as_leader(marker(7, committed=False), 0, COORDINATOR)  # 1
    log.append_as_leader(txn_batch(7, 1, b"b"), 0)  # 2
    log.append_as_leader(marker(7, committed=False), 0, COORDINATOR)  # 3
    log.truncate_to(3)
    assert [t.last_offset for t in log.collect_aborted_transactions(0, 10)] == [1]
    assert [t.first_offset for t in log.producer_state.ongoing_transactions()] == [2]


def test_a_fencing_abort_with_a_bumped_epoch_ends_the_open_transaction(tmp_path: Path) -> None:
    """The coordinator fences a producer by aborting its transaction with epoch + 1: the
    transaction's first offset must survive the epoch change, or its records would not be
    listed as aborted."""
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(txn_batch(7, 0, b"zombie", epoch=3), 0)  # 0
    log.append_as_leader(marker(7, committed=False, epoch=4), 0, COORDINATOR)  # 1
    assert log.collect_aborted_transactions(0, 2)[0].first_offset == 0
    with pytest.raises(InvalidProducerEpochError):
        log.append_as_leader(txn_batch(7, 1, b"late", epoch=3), 0)


def test_markers_from_an_old_producer_or_coordinator_epoch_are_refused(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(txn_batch(7, 0, b"a", epoch=2), 0)
    log.append_as_leader(marker(7, True, epoch=2, coordinator_epoch=5), 0, COORDINATOR)
    with pytest.raises(InvalidProducerEpochError):
        log.append_as_leader(marker(7, True, epoch=1, coordinator_epoch=5), 0, COORDINATOR)
    with pytest.raises(TransactionCoordinatorFencedError):
        log.append_as_leader(marker(7, False, epoch=2, coordinator_epoch=4), 0, COORDINATOR)
    assert log.log_end_offset == 2


def test_clients_cannot_write_markers_or_leave_a_transaction_silently(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    with pytest.raises(InvalidRecordError):
        log.append_as_leader(marker(7, committed=True), 0)
    log.append_as_leader(txn_batch(7, 0, b"a"), 0)
    non_transactional = build_batch(
        [Record(None, b"b", 0)], producer_id=7, producer_epoch=0, base_sequence=1
    )
    with pytest.raises(InvalidTxnStateError):
        log.append_as_leader(non_transactional, 0)
    assert log.log_end_offset == 1


def test_coordinator_writes_carry_no_sequence(tmp_path: Path) -> None:
    """A group coordinator writes transactional offset commits without sequence numbers;
    they are checked for the producer epoch only, as Kafka checks coordinator appends."""
    log = open_log(tmp_path / "t-0")
    commit = build_batch(
        [Record(b"k", b"v", 0)], producer_id=9, producer_epoch=1, transactional=True
    )
    log.append_as_leader(commit, 0, COORDINATOR)
    log.append_as_leader(commit, 0, COORDINATOR)
    assert log.log_end_offset == 2
    stale = build_batch(
        [Record(b"k", b"v", 0)], producer_id=9, producer_epoch=0, transactional=True
    )
    with pytest.raises(InvalidProducerEpochError):
        log.append_as_leader(stale, 0, COORDINATOR)
    assert parse_header(commit).base_sequence == -1
