"""One partition's log: a directory of segments plus the state derived from them.

Directory ``<data dir>/<topic>-<partition>/``::

    00000000000000000000.log / .index   segments (see ``segment``)
    00000000000000000000.txnindex      aborted transactions (see ``txn_index``)
    leader-epoch-checkpoint             epoch -> start offset (see ``leader_epoch_cache``)
    log-start-offset                    first offset still readable (DeleteRecords, retention)
    recovery-point                      every batch below this offset was fsynced
    00000000000000001200.snapshot       producer state below 1200 (see ``producer_snapshot``)
    clean-shutdown                      present only after ``close()``: recovery can be skipped

Appends go to the active (last) segment; it rolls when full (``segment.bytes``) or old
(``segment.ms``). Like Kafka, the broker does not fsync every append: a ``kill -9`` keeps
the page cache, and replication is what protects against a lost machine. A roll
snapshots the producer state at the new segment and has the closed one fsynced by a
background thread (Kafka's flush on roll); once that is done, ``checkpoint_recovery_point``
moves the recovery point past it. So after an unclean stop, recovery re-validates only
the segments after the last checkpoint (cut at a torn tail) and replays only their
batches into the producer state.
Not thread-safe: owned by the broker's event loop.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from pathlib import Path

from kafkalite.protocol.control_records import TransactionMarker, read_marker
from kafkalite.protocol.record_batch import (
    InvalidBatchError,
    MoreThanOneBatchError,
    RecordBatchHeader,
    iter_batches,
    parse_header,
    stamp,
    validate_batch,
    validate_produced,
)
from kafkalite.protocol.records import Record, decode_records, recompress
from kafkalite.storage.checkpoint import write_atomically
from kafkalite.storage.config import LogConfig
from kafkalite.storage.errors import (
    CorruptRecordError,
    InvalidRecordError,
    OffsetOutOfRangeError,
    RecordTooLargeError,
)
from kafkalite.storage.leader_epoch_cache import LeaderEpochCache
from kafkalite.storage.producer_snapshot import ProducerSnapshots
from kafkalite.storage.producer_state import AppendOrigin, ProducerStateManager
from kafkalite.storage.recovery import recover_segment
from kafkalite.storage.segment import LogSegment
from kafkalite.storage.segment_swap import cleaned_path, finish_interrupted_swaps, swap_in
from kafkalite.storage.txn_index import AbortedTxn

log = logging.getLogger(__name__)
CLEAN_SHUTDOWN = "clean-shutdown"
_READ_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class AppendInfo:
    first_offset: int
    last_offset: int
    log_append_time_ms: int
    log_start_offset: int
    duplicate_of: int | None = None


@dataclass(frozen=True, slots=True)
class FetchData:
    records: bytes
    log_start_offset: int
    log_end_offset: int


class Log:
    def __init__(
        self,
        directory: Path,
        config: LogConfig,
        now_ms: Callable[[], int],
        flusher: Executor | None = None,
    ) -> None:
        self.dir = directory
        self.config = config
        self.now_ms = now_ms
        self.flusher = flusher
        """Where closed segments are fsynced (a thread; None: at once, in the caller)."""
        self._flushes: deque[tuple[int, Future[None]]] = deque()
        """Background fsyncs not yet counted: (the offset they make durable, the fsync)."""
        self.segments: list[LogSegment] = []
        self.leader_epoch_cache = LeaderEpochCache(directory / "leader-epoch-checkpoint")
        self.producer_state = ProducerStateManager()
        self.snapshots = ProducerSnapshots(directory)
        self.log_start_offset = 0
        self.recovery_point = 0
        self.recovered_bytes_truncated = 0

    # ---- opening -------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        directory: Path,
        config: LogConfig,
        now_ms: Callable[[], int],
        flusher: Executor | None = None,
    ) -> Log:
        directory.mkdir(parents=True, exist_ok=True)
        plog = cls(directory, config, now_ms, flusher)
        plog._load()
        return plog

    def _load(self) -> None:
        finish_interrupted_swaps(self.dir)
        clean = (self.dir / CLEAN_SHUTDOWN).exists()
        self.log_start_offset = _read_int(self.dir / "log-start-offset", 0)
        self.recovery_point = _read_int(self.dir / "recovery-point", 0)
        bases = sorted(int(p.stem) for p in self.dir.glob("*.log"))
        recovered: set[int] = set()
        for i, base in enumerate(bases):
            segment = LogSegment(self.dir, base, self.now_ms())
            truncated = 0
            if not clean and self._needs_recovery(base, bases):
                truncated = recover_segment(segment, self.config.index_interval_bytes)
                segment.txn_index.reset()  # rebuilt below from the batches that survived
                recovered.add(base)
            else:
                segment.load_from_index(self.config.index_interval_bytes)
            if self.segments and segment.base_offset < self.segments[-1].next_offset:
                log.warning("%s: segment %d overlaps its predecessor; dropping it", self.dir, base)
                segment.delete()
                continue
            self.segments.append(segment)
            if truncated:
                # a torn batch ends the log: anything in later segments cannot follow it
                self.recovered_bytes_truncated += truncated
                for later in bases[i + 1 :]:
                    LogSegment(self.dir, later, 0).delete()
                break
        if not self.segments:
            self.segments.append(LogSegment(self.dir, self.log_start_offset, self.now_ms()))
        (self.dir / CLEAN_SHUTDOWN).unlink(missing_ok=True)
        if self.log_start_offset > self.log_end_offset:
            self.truncate_fully_and_start_at(self.log_start_offset)  # it was cut short
        self.leader_epoch_cache.truncate_from_end(self.log_end_offset)
        self.log_start_offset = max(self.log_start_offset, self.segments[0].base_offset)
        self.recovery_point = min(self.recovery_point, self.log_end_offset)
        self._rebuild_producer_state(reindex=recovered)
        if self.recovered_bytes_truncated:
            log.warning(
                "%s: recovery truncated %d bytes of torn tail",
                self.dir,
                self.recovered_bytes_truncated,
            )

    def _needs_recovery(self, base: int, bases: list[int]) -> bool:
        """Segments wholly below the recovery point were fsynced; the rest are checked."""
        later = [b for b in bases if b > base]
        return not later or later[0] > self.recovery_point

    def _rebuild_producer_state(self, reindex: set[int] | None = None) -> None:
        """Load the newest producer snapshot at or below where the log is known good (the
        first segment in ``reindex``, re-validated by recovery, else the log end), then
        replay the batch headers after it. Segments in ``reindex`` get their
        aborted-transaction index rebuilt on the way."""
        reindex = reindex or set()
        self.snapshots.delete_above(self.log_end_offset)
        good_until = min(reindex, default=self.log_end_offset)
        snapshot = self.snapshots.load_latest(good_until, self.producer_state)
        start = max(self.log_start_offset, snapshot or 0)
        for segment in self.segments[self._segment_for(start) :]:
            index = segment.base_offset in reindex
            for pos, header in segment.scan(segment.position_for(start)):
                if header.last_offset < start:
                    continue
                batch = segment.read_bytes(pos, header.size_in_bytes) if header.is_control else None
                self._track_producer(segment, header, batch, index)

    def _track_producer(
        self,
        segment: LogSegment,
        header: RecordBatchHeader,
        batch: bytes | memoryview | None,
        index: bool,
    ) -> None:
        """Apply one appended batch to the producer state; an abort marker's transaction
        goes into the aborted-transaction index of the segment holding the marker."""
        marker = _marker_of(batch, header) if batch is not None else None
        completed = self.producer_state.update(header, marker)
        if index and completed is not None and completed.is_aborted:
            segment.txn_index.append(
                AbortedTxn(
                    completed.producer_id,
                    completed.first_offset,
                    completed.last_offset,
                    self.producer_state.last_stable_offset_after(completed),
                )
            )

    # ---- properties ----------------------------------------------------------------

    @property
    def log_end_offset(self) -> int:
        return self.segments[-1].next_offset

    @property
    def size_in_bytes(self) -> int:
        return sum(s.size for s in self.segments)

    def update_config(self, config: LogConfig) -> None:
        self.config = config

    # ---- appending -----------------------------------------------------------------

    def append_as_leader(
        self, records: bytes, leader_epoch: int, origin: AppendOrigin = AppendOrigin.CLIENT
    ) -> AppendInfo:
        """Validate the one batch produced for this partition, then write it (or nothing).

        Only a coordinator (``origin``) may write control batches: transaction markers,
        checked against the producer's and the coordinator's epochs."""
        try:
            header = validate_produced(records)
            codec = self.config.compression
            if codec is not None and codec != header.compression and not header.is_control:
                records = recompress(records, codec)  # the topic's compression.type
                header = parse_header(records, 0)
        except MoreThanOneBatchError as exc:
            raise InvalidRecordError(str(exc)) from exc
        except InvalidBatchError as exc:
            raise CorruptRecordError(str(exc)) from exc
        if header.size_in_bytes > self.config.max_message_bytes:
            raise RecordTooLargeError(
                f"batch of {header.size_in_bytes} bytes exceeds max.message.bytes "
                f"({self.config.max_message_bytes})"
            )
        if header.is_control:
            self._check_control_batch(records, 0, header, origin)
        elif self.config.compact:
            _check_keys(records)
        duplicate = self.producer_state.check(header, origin)
        if duplicate is not None:
            return AppendInfo(
                duplicate.first_offset,
                duplicate.last_offset,
                -1,
                self.log_start_offset,
                duplicate_of=duplicate.first_offset,
            )
        self.leader_epoch_cache.assign(leader_epoch, self.log_end_offset)
        first = self.log_end_offset
        data = bytearray(records)
        stamp(data, 0, first, leader_epoch)
        self._append_stamped(bytes(data))
        return AppendInfo(
            first,
            first + header.records_count - 1,
            self.now_ms() if self.config.log_append_time else -1,
            self.log_start_offset,
        )

    def _check_control_batch(
        self, records: bytes, pos: int, header: RecordBatchHeader, origin: AppendOrigin
    ) -> None:
        if origin == AppendOrigin.CLIENT:
            raise InvalidRecordError("clients may not write control batches")
        marker = _marker_of(records, header, pos)
        if marker is None:
            raise InvalidRecordError("a control batch must hold one transaction marker")
        self.producer_state.check_marker(header, marker)

    def append_as_follower(self, records: bytes) -> AppendInfo:
        """Batches that already carry offsets and epochs (replication, later issues)."""
        pos = 0
        first = self.log_end_offset
        expected = first
        try:
            while pos < len(records):
                header = validate_batch(records, pos)
                if header.base_offset < expected:  # gaps: a compacted leader's log
                    raise CorruptRecordError(
                        f"batch at offset {header.base_offset}, log ends at {expected}"
                    )
                self.leader_epoch_cache.assign(header.partition_leader_epoch, header.base_offset)
                expected = header.next_offset
                pos += header.size_in_bytes
        except InvalidBatchError as exc:
            raise CorruptRecordError(str(exc)) from exc
        self._append_stamped(records)
        return AppendInfo(first, expected - 1, -1, self.log_start_offset)

    def _append_stamped(self, data: bytes) -> None:
        pos = 0
        while pos < len(data):
            header = parse_header(data, pos)
            self._maybe_roll(header.size_in_bytes)
            batch = memoryview(data)[pos : pos + header.size_in_bytes]
            self.segments[-1].append(batch, header, self.config.index_interval_bytes)
            self._track_producer(
                self.segments[-1], header, batch if header.is_control else None, index=True
            )
            pos += header.size_in_bytes

    def _maybe_roll(self, incoming: int) -> None:
        active = self.segments[-1]
        too_big = active.size + incoming > self.config.segment_bytes
        too_old = self.now_ms() - active.created_ms > self.config.segment_ms
        if active.size > 0 and (too_big or too_old):
            self._roll()

    def _roll(self) -> None:
        """Start a new active segment. As Kafka does at a roll, the producer state is
        snapshotted at the new base and the closed segment is fsynced in the background;
        the recovery point moves past it at a later checkpoint."""
        closed = self.segments[-1]
        base = self.log_end_offset
        self.segments.append(LogSegment(self.dir, base, self.now_ms()))
        self.snapshots.write(base, self.producer_state)
        self._flushes.append((base, closed.flush_later(self.flusher)))

    # ---- reading -------------------------------------------------------------------

    def _segment_for(self, offset: int) -> int:
        for i in range(len(self.segments) - 1, -1, -1):
            if self.segments[i].base_offset <= offset:
                return i
        return 0

    def read(
        self, start_offset: int, max_bytes: int, max_offset: int, min_one_message: bool = True
    ) -> FetchData:
        """Whole batches from the one holding ``start_offset``, all below ``max_offset``.
        A segment with nothing at or after ``start_offset`` (compaction removed its last
        batches, or all of them) passes the read on to the next one, as in Kafka."""
        if start_offset < self.log_start_offset or start_offset > self.log_end_offset:
            raise OffsetOutOfRangeError(
                f"offset {start_offset} is outside [{self.log_start_offset}, {self.log_end_offset}]"
            )
        records = b""
        index = self._segment_for(start_offset)
        while start_offset < max_offset and not records and index < len(self.segments):
            records = self._read_segment(
                self.segments[index], start_offset, max_bytes, max_offset, min_one_message
            )
            index += 1
        return FetchData(records, self.log_start_offset, self.log_end_offset)

    @staticmethod
    def _read_segment(
        segment: LogSegment,
        start_offset: int,
        max_bytes: int,
        max_offset: int,
        min_one_message: bool,
    ) -> bytes:
        start = segment.position_for(start_offset)
        end = start
        for pos, header in segment.scan(start):
            if header.base_offset >= max_offset:
                break
            size = pos + header.size_in_bytes - start
            if size > max_bytes and not (min_one_message and end == start):
                break
            end = pos + header.size_in_bytes
        return segment.read_bytes(start, end - start)

    def bytes_between(self, start_offset: int, end_offset: int) -> int:
        """Roughly how many bytes of batches lie in [start, end): for fetch ``min_bytes``."""
        if end_offset <= start_offset:
            return 0
        first, last = self._segment_for(start_offset), self._segment_for(end_offset)
        if first == last:
            segment = self.segments[first]
            return max(segment.position_for(end_offset) - segment.position_for(start_offset), 1)
        total = self.segments[first].size - self.segments[first].position_for(start_offset)
        total += sum(s.size for s in self.segments[first + 1 : last])
        return total + self.segments[last].position_for(end_offset)

    def batches_from(self, offset: int) -> Iterator[tuple[LogSegment, RecordBatchHeader]]:
        for segment in self.segments[self._segment_for(offset) :]:
            for _, header in segment.scan(0):
                if header.last_offset >= offset:
                    yield segment, header

    def batches_between(
        self, start: int, end: int
    ) -> Iterator[tuple[RecordBatchHeader, list[Record]]]:
        """Each uncompressed batch in [start, end) with its decoded records (those in the
        range), control batches included: who wrote it (producer id, transactional) matters
        to the coordinators that replay their internal logs. Never the hot path."""
        position = start
        while position < end:
            data = self.read(position, _READ_CHUNK, end).records
            if not data:
                return
            for pos, header in iter_batches(data):
                yield header, [r for r in decode_records(data, pos) if position <= r.offset < end]
                position = header.next_offset

    def records_between(self, start: int, end: int) -> Iterator[Record]:
        """Decoded records of uncompressed, non-control batches in [start, end).

        Only for the broker's own internal logs (metadata, group offsets), never the hot path.
        """
        for header, records in self.batches_between(start, end):
            if not header.is_control:
                yield from records

    def collect_aborted_transactions(self, start_offset: int, end_offset: int) -> list[AbortedTxn]:
        """Aborted transactions with records in ``[start_offset, end_offset)``: what a
        read_committed Fetch of that range lists for the client to filter by.

        A marker follows its transaction's records, so only segments from the one holding
        ``start_offset`` on can index one. The scan stops at an entry whose LSO was past
        ``end_offset`` when it was written: every transaction with records below
        ``end_offset`` had ended by then, so later entries cannot overlap (Kafka's rule)."""
        found: list[AbortedTxn] = []
        for segment in self.segments[self._segment_for(start_offset) :]:
            for txn in segment.txn_index.entries:
                if txn.last_offset >= start_offset and txn.first_offset < end_offset:
                    found.append(txn)
                if txn.last_stable_offset >= end_offset:
                    return found
        return found

    def recent_aborted_transactions(self, limit: int) -> list[AbortedTxn]:
        """The last ``limit`` aborted transactions still in the log, oldest first."""
        found: list[AbortedTxn] = []
        for segment in reversed(self.segments):
            found[:0] = segment.txn_index.entries[-(limit - len(found)) :]
            if len(found) >= limit:
                break
        return found

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """First record with a timestamp >= ``timestamp`` (records decoded only here)."""
        for segment in self.segments:
            if segment.max_timestamp < timestamp:
                continue
            for pos, header in segment.scan(0):
                if header.max_timestamp < timestamp or header.last_offset < self.log_start_offset:
                    continue
                batch = segment.read_bytes(pos, header.size_in_bytes)
                for record in decode_records(batch):
                    if record.timestamp >= timestamp and record.offset >= self.log_start_offset:
                        return record.offset, record.timestamp
        return None

    def max_timestamp_offset(self, max_offset: int) -> tuple[int, int] | None:
        """The first record with the largest timestamp in the batches that start below
        ``max_offset`` (ListOffsets -3): batch headers find the batch, then only that batch
        is decoded."""
        best: tuple[LogSegment, int, RecordBatchHeader] | None = None
        for segment in self.segments:
            for pos, header in segment.scan(0):
                if header.last_offset < self.log_start_offset or header.is_control:
                    continue
                if header.base_offset >= max_offset:
                    break
                if best is None or header.max_timestamp > best[2].max_timestamp:
                    best = (segment, pos, header)
        if best is None:
            return None
        segment, pos, header = best
        for record in decode_records(segment.read_bytes(pos, header.size_in_bytes)):
            if record.timestamp == header.max_timestamp:
                return record.offset, record.timestamp
        return header.base_offset, header.max_timestamp  # LogAppendTime: the batch's time

    # ---- removing data -------------------------------------------------------------

    def truncate_to(self, offset: int) -> None:
        """Drop every offset >= ``offset`` (a follower diverged from its leader)."""
        if offset >= self.log_end_offset:
            return
        while len(self.segments) > 1 and self.segments[-1].base_offset >= offset:
            self.segments.pop().delete()
        active = self.segments[-1]
        active.truncate_to_position(active.position_for(offset), self.config.index_interval_bytes)
        active.txn_index.truncate_to(offset)
        self.leader_epoch_cache.truncate_from_end(self.log_end_offset)
        self.recovery_point = min(self.recovery_point, self.log_end_offset)
        self._forget_flushes_above(self.log_end_offset)
        self._rebuild_producer_state()  # from the newest snapshot not above the new end

    def replace_segments(
        self, group: list[LogSegment], sizes: list[int], aborted: list[AbortedTxn]
    ) -> bool:
        """Swap the log cleaner's copy of ``group`` (its ``.cleaned`` file) in for the group
        (``segment_swap``), with ``aborted`` as its transaction index. False, and the copy
        dropped, when the group is no longer as the cleaner read it (``sizes``): retention,
        truncation or DeleteRecords got there first."""
        base = group[0].base_offset
        at = next((i for i, s in enumerate(self.segments) if s is group[0]), len(self.segments))
        current = self.segments[at : at + len(group)]
        unchanged = (
            len(current) == len(group)
            and all(a is b for a, b in zip(current, group, strict=True))
            and [s.size for s in current] == sizes
            and at + len(group) < len(self.segments)  # never the active segment
        )
        if not unchanged:
            cleaned_path(self.dir, base).unlink(missing_ok=True)
            return False
        modified_ns = max(s.last_modified_ns for s in group)
        for segment in group:
            segment.close()
        swap_in(self.dir, base, [s.base_offset for s in group])
        cleaned = LogSegment(self.dir, base, group[0].created_ms)
        cleaned.load(self.config.index_interval_bytes)
        for txn in aborted:
            cleaned.txn_index.append(txn)
        cleaned.set_last_modified_ns(modified_ns)  # tombstones age from the originals
        self.segments[at : at + len(group)] = [cleaned]
        return True

    def _forget_flushes_above(self, offset: int) -> None:
        """A pending fsync of truncated data must not move the recovery point past the
        new end, where other batches will be written."""
        self._flushes = deque((o, f) for o, f in self._flushes if o <= offset)

    def maybe_increment_log_start_offset(self, offset: int) -> bool:
        """Move the log start offset up to ``offset`` and drop segments wholly below it:
        DeleteRecords on a leader, or a follower catching up with its leader's log start
        (else records deleted on the leader would come back when the follower leads).
        True when it moved."""
        if offset <= self.log_start_offset:
            return False
        self.log_start_offset = min(offset, self.log_end_offset)
        self._delete_segments_below(self.log_start_offset)
        write_atomically(self.dir / "log-start-offset", f"{self.log_start_offset}\n")
        self.leader_epoch_cache.truncate_from_start(self.log_start_offset)
        return True

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Empty the log and restart it at ``offset``: a follower whose whole log lies below
        its leader's log start (Kafka's ``truncateFullyAndStartAt``). The new log start is
        written first, so a crash midway is finished by the next ``open``."""
        self.log_start_offset = offset
        write_atomically(self.dir / "log-start-offset", f"{offset}\n")
        for segment in self.segments:
            segment.delete()
        self.segments = [LogSegment(self.dir, offset, self.now_ms())]
        self.recovery_point = offset
        write_atomically(self.dir / "recovery-point", f"{offset}\n")
        self.leader_epoch_cache.clear()
        self.producer_state.clear()
        self.snapshots.delete_above(-1)
        self._forget_flushes_above(offset)

    def _delete_segments_below(self, offset: int) -> list[int]:
        deleted = []
        while len(self.segments) > 1 and self.segments[1].base_offset <= offset:
            segment = self.segments.pop(0)
            deleted.append(segment.base_offset)
            segment.delete()
        return deleted

    def enforce_retention(self, high_watermark: int) -> list[int]:
        """Delete closed segments past ``retention.ms`` or beyond ``retention.bytes``, but
        only those wholly below ``high_watermark`` (Kafka's rule: never what is not yet
        committed). Returns the deleted segments' base offsets."""
        if not self.config.delete:
            return []
        now = self.now_ms()
        deleted: list[int] = []
        while len(self.segments) > 1 and self.segments[1].base_offset <= high_watermark:
            oldest = self.segments[0]
            expired = self.config.retention_ms >= 0 and (
                0 <= oldest.max_timestamp < now - self.config.retention_ms
            )
            oversize = self.config.retention_bytes >= 0 and (
                self.size_in_bytes - oldest.size >= self.config.retention_bytes
            )
            if not (expired or oversize):
                break
            deleted.append(oldest.base_offset)
            self.segments.pop(0).delete()
        if deleted:
            self.log_start_offset = max(self.log_start_offset, self.segments[0].base_offset)
            write_atomically(self.dir / "log-start-offset", f"{self.log_start_offset}\n")
            self.leader_epoch_cache.truncate_from_start(self.log_start_offset)
        return deleted

    # ---- durability ----------------------------------------------------------------

    def checkpoint_recovery_point(self) -> None:
        """Move the recovery point past every segment whose background fsync has finished
        (in order) and write it down. The file is written after the fsync and need not be
        durable itself: an older recovery point only means more recovery. A failed fsync
        raises here: a disk error, which stops the broker."""
        moved = False
        while self._flushes and self._flushes[0][1].done():
            offset, flushed = self._flushes.popleft()
            flushed.result()
            if offset > self.recovery_point:
                self.recovery_point, moved = offset, True
        if moved:
            text = f"{self.recovery_point}\n"
            write_atomically(self.dir / "recovery-point", text, durable=False)

    def flush(self) -> None:
        """fsync everything now (clean shutdown): the recovery point becomes the log end."""
        for _, flushed in self._flushes:
            flushed.result()
        self._flushes.clear()
        for segment in self.segments:
            if segment.next_offset > self.recovery_point:
                segment.flush()
        self.recovery_point = self.log_end_offset
        write_atomically(self.dir / "recovery-point", f"{self.recovery_point}\n", durable=False)

    def close(self) -> None:
        self.flush()
        self.snapshots.write(self.log_end_offset, self.producer_state)
        for segment in self.segments:
            segment.close()
        (self.dir / CLEAN_SHUTDOWN).touch()

    def delete(self) -> None:
        for segment in self.segments:
            segment.delete()
        for path in self.dir.iterdir():
            path.unlink()
        self.dir.rmdir()


def _read_int(path: Path, default: int) -> int:
    try:
        return int(path.read_text().strip())
    except (FileNotFoundError, ValueError):
        return default


def _marker_of(
    batch: bytes | memoryview, header: RecordBatchHeader, pos: int = 0
) -> TransactionMarker | None:
    """The transaction marker a control batch holds; None for anything else."""
    try:
        return read_marker(batch, pos, header)
    except (InvalidBatchError, ValueError):
        return None


def _check_keys(batch: bytes) -> None:
    """A compacted topic keeps the latest value per key: a record without a key has no
    place in it (Kafka: INVALID_RECORD)."""
    try:
        keyless = any(r.key is None for r in decode_records(batch))
    except InvalidBatchError as exc:
        raise CorruptRecordError(str(exc)) from exc
    if keyless:
        raise InvalidRecordError("Compacted topic cannot accept message without key")
