"""Compaction survives a power loss at every step of swapping its cleaned copy in.

The crash points are enumerated, not hoped for: a cleaning pass runs once per disk call
of the swap, with the plug pulled before that call (``power_loss``), and every directory
the power loss could leave behind is opened as the restarted broker would. Each must hold
the old segments or the cleaned one, complete: the same records at the same offsets, and
the aborted transaction a read_committed consumer must still be told about.

Seen before the fix: the cleaned copy was renamed into place without ever being fsynced,
so a power loss could keep the renames and lose the copy's data: the old segments gone,
an empty one in their place. Its aborted-transaction index was written after the swap,
also unsynced: a power loss could leave the cleaned segment without it, and aborted
records read as committed.
"""

from __future__ import annotations

import hashlib
import itertools
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from kafkalite.disk import DISK, Disk
from kafkalite.protocol.control_records import end_txn_marker_batch
from kafkalite.protocol.records import Record, build_batch
from kafkalite.storage.cleaner import CleanerStats, clean, log_to_clean
from kafkalite.storage.config import LogConfig
from kafkalite.storage.log import Log
from kafkalite.storage.producer_state import AppendOrigin
from kafkalite.storage.txn_index import AbortedTxn
from tests.unit.storage.power_loss import PowerLossDisk, PowerLost
from tests.unit.storage.test_cleaner import read_all

pytestmark = pytest.mark.unit

CONFIG = LogConfig(cleanup_policy="compact", segment_bytes=100_000, segment_ms=1)
"""A segment per batch (each append rolls: ``segment.ms`` is 1 and the clock moves 10 ms a
call), all small enough for one cleaning group: one swap replaces them all."""

State = tuple[list[tuple[int, bytes | None, bytes | None]], list[AbortedTxn]]


def open_log(directory: Path, disk: Disk = DISK) -> Log:
    clock = itertools.count(1_000_000, 10)
    return Log.open(directory, CONFIG, lambda: next(clock), disk=disk)


def write_log(directory: Path) -> None:
    """Two versions of two keys, an aborted transaction that stays (its producer's last
    batch, which the cleaner keeps for its retries), then newer versions; fsynced, and left
    open, as a broker's log is when the power goes."""
    log = open_log(directory)
    for version in range(2):
        for key in (b"a", b"b"):
            log.append_as_leader(build_batch([Record(key, b"%s%d" % (key, version), 0)]), 0)
    txn = {"producer_id": 5, "producer_epoch": 0, "transactional": True, "base_sequence": 0}
    log.append_as_leader(build_batch([Record(b"t", b"aborted", 0)], **txn), 0)  # type: ignore[arg-type]
    log.append_as_leader(end_txn_marker_batch(5, 0, 0, False, 0), 0, AppendOrigin.COORDINATOR)
    for key in (b"a", b"b"):
        log.append_as_leader(build_batch([Record(key, b"%s-last" % key, 0)]), 0)
    log.flush()


def clean_once(directory: Path, disk: Disk = DISK) -> None:
    log = open_log(directory, disk)
    to_clean = log_to_clean(log, log.log_end_offset, 1_000_000)
    assert to_clean is not None
    stats = CleanerStats(to_clean.first_dirty_offset)
    for _ in clean(log, to_clean, 1_000_000, stats):
        pass
    assert stats.completed


def state(directory: Path) -> State:
    """What the restarted broker serves: every record, and the aborted transactions."""
    log = open_log(directory)
    return read_all(log), log.collect_aborted_transactions(0, log.log_end_offset)


def power_losses(
    source: Path, root: Path, work: Callable[[Path, Disk], object]
) -> Iterator[tuple[str, Path]]:
    """Run ``work`` on a copy of ``source`` once per disk call it makes, the power lost
    before that call (and once more, to the end); yield every directory each power loss
    could leave, with where it happened."""
    for crash_at in itertools.count():
        live = root / f"live-{crash_at}" / source.name
        shutil.copytree(source, live)
        disk = PowerLossDisk(live, crash_at)
        try:
            work(live, disk)
            finished = True
        except PowerLost:
            finished = False
        for aftermath in disk.aftermaths(root / f"crash-{crash_at}"):
            yield f"power lost before disk call {crash_at}, {aftermath.name}", aftermath
        if finished:
            assert crash_at >= 3  # the renames and deletes were all crash points
            return


def test_a_power_loss_at_any_step_of_a_swap_leaves_the_old_segments_or_the_new(
    tmp_path: Path,
) -> None:
    """And one while the restarted broker finishes the swap leaves the new ones."""
    source = tmp_path / "source" / "t-0"
    write_log(source)
    old = state(source)
    cleaned = tmp_path / "cleaned" / "t-0"
    shutil.copytree(source, cleaned)
    clean_once(cleaned)
    new = state(cleaned)
    assert len(new[0]) < len(old[0]) and new[1] == old[1] != []

    seen: set[tuple[tuple[str, bytes], ...]] = set()
    recoveries = 0
    for where, aftermath in power_losses(source, tmp_path / "cleaning", clean_once):
        if not first_seen(aftermath, seen):
            continue
        if any(aftermath.glob("*.log.swap")):  # decided, not finished: opening finishes it
            recoveries += 1
            recovering = power_losses(aftermath, tmp_path / "recovering" / where, open_log)
            for again, after_recovery in recovering:
                if first_seen(after_recovery, seen):
                    assert state(after_recovery) == new, f"{where}, then {again} in recovery"
        found = state(aftermath)
        assert found in (old, new), f"{where}: neither the old segments nor the new"
    assert recoveries


def first_seen(directory: Path, seen: set[tuple[tuple[str, bytes], ...]]) -> bool:
    """Whether no directory with the same files was checked before (many power losses
    leave the same files behind)."""
    files = tuple(
        (p.name, hashlib.sha256(p.read_bytes()).digest()) for p in sorted(directory.iterdir())
    )
    if files in seen:
        return False
    seen.add(files)
    return True
