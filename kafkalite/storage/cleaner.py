"""Kafka's log cleaner for one partition log (``cleanup.policy=compact``).

A compacted topic keeps, for every key, at least its latest value: a changelog that a new
replica of a service can replay from the start to rebuild its state, without every
update ever made. The log is two parts::

    log start        first dirty offset        first uncleanable offset      log end
       | clean (cleaned before) | dirty (written since) | uncleanable (active segment, |
                                                         | not yet stable, or too young) |

A pass maps each key of the dirty part to its latest offset there, then recopies every
segment below the mapped end: a record goes if a later one has its key, a tombstone (null
value) goes once its segment is older than ``delete.retention.ms``, records of aborted
transactions go. Offsets never change: a cleaned log has gaps, which readers skip. The
first dirty offset moves to the mapped end (``cleaner-offset-checkpoint`` in the partition
directory). A log is cleaned when its dirty share of the cleanable bytes reaches
``min.cleanable.dirty.ratio`` or a dirty segment is older than ``max.compaction.lag.ms``.

Kafka's rules kept here: the active segment and anything at or above the last stable
offset (hence the high watermark) are never touched; records younger than
``min.compaction.lag.ms`` neither. Transaction markers: an abort marker stays while any
record of its transaction does (its entry in the cleaned ``.txnindex`` with it), a commit
marker while any record of its transaction does, and either one ages like a tombstone.
The batch holding a producer's last sequence stays whole, so a retry of it is still
recognised as a duplicate. Batches keep their offset range, producer and sequence range.

Each replica cleans its own copy (offsets are the same everywhere). The work is a
generator of steps (one per dirty segment mapped, one per group of segments recopied),
so the broker can run it between requests on its event loop.
"""

from __future__ import annotations

import logging
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field

from kafkalite.protocol.record_batch import RecordBatchHeader, parse_header
from kafkalite.protocol.records import Record, decode_records, retain_records
from kafkalite.storage.checkpoint import write_atomically
from kafkalite.storage.log import Log
from kafkalite.storage.segment import LogSegment
from kafkalite.storage.segment_swap import cleaned_path
from kafkalite.storage.txn_index import AbortedTxn

log = logging.getLogger(__name__)
CHECKPOINT = "cleaner-offset-checkpoint"
MAX_MAP_KEYS = 1_000_000
"""Keys one pass may map (Kafka bounds its map by ``log.cleaner.dedupe.buffer.size``);
a dirty part with more is cleaned over several passes."""


@dataclass(frozen=True, slots=True)
class LogToClean:
    """The parts of one log as the cleaner sees them (Kafka's ``LogToClean``)."""

    first_dirty_offset: int
    first_uncleanable_offset: int
    clean_bytes: int
    cleanable_bytes: int
    oldest_dirty_timestamp: int

    @property
    def dirty_ratio(self) -> float:
        total = self.clean_bytes + self.cleanable_bytes
        return self.cleanable_bytes / total if total else 0.0


@dataclass(slots=True)
class CleanerStats:
    """What one pass read and removed (the ``log_cleaned`` event reports it)."""

    first_dirty_offset: int
    end_offset: int = -1
    records_read: int = 0
    records_removed: int = 0
    tombstones_removed: int = 0
    aborted_records_removed: int = 0
    markers_removed: int = 0
    bytes_before: int = 0
    bytes_after: int = 0
    completed: bool = False


def first_dirty_offset(plog: Log) -> int:
    """Where the last pass stopped (its checkpoint), never below the log start."""
    try:
        checkpoint = int((plog.dir / CHECKPOINT).read_text().strip())
    except (FileNotFoundError, ValueError):
        checkpoint = 0
    return max(checkpoint, plog.log_start_offset)


def log_to_clean(plog: Log, last_stable_offset: int, now_ms: int) -> LogToClean | None:
    """The cleanable part of ``plog``, or None when nothing in it may be cleaned."""
    if not plog.config.compact:
        return None
    first_dirty = first_dirty_offset(plog)
    bound = min(plog.segments[-1].base_offset, last_stable_offset)
    lag_ms = plog.config.min_compaction_lag_ms
    if lag_ms > 0:
        young = [s.base_offset for s in plog.segments if s.max_timestamp > now_ms - lag_ms]
        bound = min([bound, *young])
    # whole segments only: the first uncleanable offset is the base of the segment holding it
    first_uncleanable = max(
        (s.base_offset for s in plog.segments if s.base_offset <= bound), default=0
    )
    if first_uncleanable <= first_dirty:
        return None
    clean = [s for s in plog.segments if s.next_offset <= first_dirty]
    dirty = [
        s
        for s in plog.segments
        if s.next_offset > first_dirty and s.base_offset < first_uncleanable
    ]
    return LogToClean(
        first_dirty,
        first_uncleanable,
        sum(s.size for s in clean),
        sum(s.size for s in dirty),
        min((s.max_timestamp for s in dirty if s.max_timestamp >= 0), default=now_ms),
    )


def needs_cleaning(plog: Log, to_clean: LogToClean, now_ms: int) -> bool:
    """Dirty enough (``min.cleanable.dirty.ratio``) or dirty too long
    (``max.compaction.lag.ms``)."""
    overdue = to_clean.oldest_dirty_timestamp < now_ms - plog.config.max_compaction_lag_ms
    return to_clean.dirty_ratio >= plog.config.min_cleanable_dirty_ratio or overdue


def clean(
    plog: Log, to_clean: LogToClean, now_ms: int, stats: CleanerStats
) -> Generator[None, None, None]:
    """One cleaning pass, a step per ``next()``; ``stats`` fills in as it goes.

    Between steps the log may change (appends, rolls, retention, truncation): a group
    whose segments changed is not swapped in and the pass ends without its checkpoint."""
    offset_map: dict[bytes, int] = {}
    aborted = plog.collect_aborted_transactions(
        plog.log_start_offset, to_clean.first_uncleanable_offset
    )
    end = to_clean.first_dirty_offset
    for segment in _segments_between(
        plog, to_clean.first_dirty_offset, to_clean.first_uncleanable_offset
    ):
        end, full = _map_segment(segment, to_clean, aborted, offset_map, end)
        yield
        if full:
            break
    else:
        end = to_clean.first_uncleanable_offset
    stats.end_offset = end
    recopy = _RecopyState(offset_map, end, aborted, now_ms - plog.config.delete_retention_ms)
    for group in _groups(plog, end):
        sizes = [s.size for s in group]
        kept_aborted = _clean_group(plog, group, recopy, stats)
        if not plog.replace_segments(group, sizes, kept_aborted):
            log.info("%s: cleaning pass abandoned: segments changed under it", plog.dir)
            return
        yield
    write_atomically(plog.dir / CHECKPOINT, f"{end}\n", durable=False)
    stats.completed = True


# ---- mapping the dirty part ---------------------------------------------------------------


def _segments_between(plog: Log, start: int, end: int) -> list[LogSegment]:
    return [s for s in plog.segments if s.next_offset > start and s.base_offset < end]


def _map_segment(
    segment: LogSegment,
    to_clean: LogToClean,
    aborted: list[AbortedTxn],
    offset_map: dict[bytes, int],
    end: int,
) -> tuple[int, bool]:
    """Map the keys of one dirty segment to their latest offsets; returns the offset the
    map covers up to and whether the map is full (the pass then stops there)."""
    for pos, header in segment.scan(segment.position_for(to_clean.first_dirty_offset)):
        if header.base_offset >= to_clean.first_uncleanable_offset:
            break
        if header.last_offset < to_clean.first_dirty_offset:
            continue
        if not header.is_control and not _is_aborted(header, aborted):
            records = decode_records(segment.read_bytes(pos, header.size_in_bytes))
            new_keys = {r.key for r in records if r.key is not None} - offset_map.keys()
            if len(offset_map) + len(new_keys) > MAX_MAP_KEYS:
                return end, True
            for record in records:
                if record.key is not None and record.offset >= to_clean.first_dirty_offset:
                    offset_map[record.key] = record.offset
        end = header.next_offset
    return end, False


# ---- recopying ----------------------------------------------------------------------------


@dataclass(slots=True)
class _RecopyState:
    """What the recopy of one pass carries from group to group."""

    offset_map: dict[bytes, int]
    end: int
    aborted: list[AbortedTxn]
    delete_horizon_ms: int
    """Tombstones and markers in segments last written before this may go."""
    retained_txn_data: dict[int, bool] = field(default_factory=dict)
    """Per producer: has a batch of its current transaction been kept so far?"""


def _groups(plog: Log, end: int) -> Iterator[list[LogSegment]]:
    """Consecutive segments below ``end``, each group at most ``segment.bytes`` in total,
    so the cleaned copies do not shrink into many tiny segments (Kafka's grouping)."""
    group: list[LogSegment] = []
    size = 0
    for segment in [s for s in plog.segments[:-1] if s.base_offset < end]:
        if group and size + segment.size > plog.config.segment_bytes:
            yield group
            group, size = [], 0
        group.append(segment)
        size += segment.size
    if group:
        yield group


def _clean_group(
    plog: Log, group: list[LogSegment], state: _RecopyState, stats: CleanerStats
) -> list[AbortedTxn]:
    """Write the group's surviving batches to its ``.cleaned`` file; returns the aborted
    transactions whose markers survive (the cleaned segment's ``.txnindex``)."""
    kept_markers: set[int] = set()
    with cleaned_path(plog.dir, group[0].base_offset).open("wb") as out:
        for segment in group:
            retain_deletes = segment.last_modified_ns // 1_000_000 > state.delete_horizon_ms
            for pos, header in segment.scan(0):
                batch = segment.read_bytes(pos, header.size_in_bytes)
                stats.bytes_before += len(batch)
                kept = _clean_batch(plog, batch, header, retain_deletes, state, stats)
                if kept is not None:
                    out.write(kept)
                    stats.bytes_after += len(kept)
                    if header.is_control:
                        kept_markers.add(header.base_offset)
        out.flush()
    entries = [t for s in group for t in s.txn_index.entries]
    return [t for t in entries if t.last_offset in kept_markers]


def _clean_batch(
    plog: Log,
    batch: bytes,
    header: RecordBatchHeader,
    retain_deletes: bool,
    state: _RecopyState,
    stats: CleanerStats,
) -> bytes | None:
    """The batch as it survives cleaning, or None when it goes entirely."""
    records_count = header.records_count
    stats.records_read += records_count
    if header.is_control:
        had_data = state.retained_txn_data.pop(header.producer_id, False)
        if had_data or retain_deletes:
            return batch
        stats.markers_removed += 1
        return None
    if header.last_offset >= state.end:
        return batch  # beyond what this pass mapped: untouched
    last_of_producer = _is_producers_last_batch(plog, header)
    if header.is_transactional and _is_aborted(header, state.aborted):
        if last_of_producer:
            state.retained_txn_data[header.producer_id] = True
            return batch
        stats.records_removed += records_count
        stats.aborted_records_removed += records_count
        return None
    removed_tombstones = 0

    def keep(record: Record) -> bool:
        nonlocal removed_tombstones
        if record.key is None or state.offset_map.get(record.key, -1) > record.offset:
            return False
        if record.value is None and not retain_deletes:
            removed_tombstones += 1
            return False
        return True

    kept = retain_records(batch, keep)
    if kept is None and last_of_producer:
        kept, removed_tombstones = batch, 0  # a retry of it must still be a duplicate
    kept_count = 0 if kept is None else parse_header(kept, 0).records_count
    stats.records_removed += records_count - kept_count
    stats.tombstones_removed += removed_tombstones
    if header.is_transactional and kept is not None:
        state.retained_txn_data[header.producer_id] = True
    return kept


def _is_producers_last_batch(plog: Log, header: RecordBatchHeader) -> bool:
    entry = plog.producer_state.producers.get(header.producer_id)
    return (
        header.has_producer_id
        and entry is not None
        and entry.producer_epoch == header.producer_epoch
        and entry.last_seq == header.last_sequence
    )


def _is_aborted(header: RecordBatchHeader, aborted: list[AbortedTxn]) -> bool:
    return header.is_transactional and any(
        t.producer_id == header.producer_id
        and t.first_offset <= header.base_offset <= t.last_offset
        for t in aborted
    )
