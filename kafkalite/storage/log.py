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

The parts of that story live beside this module: opening and recovery in ``log_loader``,
the checks before a leader's append in ``log_validator``, keeping the producer state in
step with the batches in ``log_producer_state``, lookups by timestamp in
``timestamp_lookup``.
Not thread-safe: owned by the broker's event loop.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from pathlib import Path

from kafkalite.disk import DISK, Disk
from kafkalite.protocol.record_batch import (
    InvalidBatchError,
    RecordBatchHeader,
    iter_batches,
    parse_header,
    stamp,
    validate_batch,
)
from kafkalite.protocol.records import Record, decode_records
from kafkalite.storage.checkpoint import write_atomically
from kafkalite.storage.config import LogConfig
from kafkalite.storage.errors import (
    CorruptRecordError,
    OffsetOutOfRangeError,
    UnexpectedAppendOffsetError,
)
from kafkalite.storage.file_records import Records
from kafkalite.storage.leader_epoch_cache import LeaderEpochCache
from kafkalite.storage.log_loader import CLEAN_SHUTDOWN, load
from kafkalite.storage.log_producer_state import rebuild_producer_state, track_batch
from kafkalite.storage.log_validator import validate_leader_batch
from kafkalite.storage.producer_snapshot import ProducerSnapshots
from kafkalite.storage.producer_state import AppendOrigin, ProducerStateManager
from kafkalite.storage.segment import LogSegment
from kafkalite.storage.segment_swap import discard, seal, swap_in
from kafkalite.storage.txn_index import AbortedTxn

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


@dataclass(frozen=True, slots=True)
class FetchedRecords:
    """A Fetch's batches (``b""`` when none) and the offset after the last of them."""

    records: Records
    next_offset: int


def _locate_in_segment(
    segment: LogSegment, start_offset: int, max_bytes: int, max_offset: int, min_one: bool
) -> tuple[int, int, int] | None:
    """``(start, end, next offset)`` of the whole batches of ``segment`` from the one
    holding ``start_offset``: those that begin below ``max_offset``, in at most
    ``max_bytes`` (but the first one whatever its size when ``min_one``). Found with the
    sparse index and a few headers on each side: the batches between are not read.
    ``next offset`` is the base offset of the first batch left out (or the segment's
    next offset)."""
    start, first = segment.batch_at(start_offset)
    if first is None or first.base_offset >= max_offset:
        return None
    end, after = segment.batch_at(max_offset)
    if after is None:
        next_offset = segment.next_offset
    elif after.base_offset < max_offset:  # it holds max_offset, but begins below: it is in
        end, next_offset = end + after.size_in_bytes, after.next_offset
    else:
        next_offset = after.base_offset
    if end - start > max_bytes:
        end, cut = segment.boundary_at_or_below(start + max_bytes, start)
        next_offset = cut.base_offset
        if end == start:
            if not min_one:
                return None
            end, next_offset = start + first.size_in_bytes, first.next_offset
    return start, end, next_offset


class Log:
    def __init__(
        self,
        directory: Path,
        config: LogConfig,
        now_ms: Callable[[], int],
        flusher: Executor | None = None,
        disk: Disk = DISK,
    ) -> None:
        self.dir = directory
        self.config = config
        self.now_ms = now_ms
        self.flusher = flusher
        """Where closed segments are fsynced (a thread; None: at once, in the caller)."""
        self.disk = disk
        """How files are replaced step by step (``segment_swap``)."""
        self._flushes: deque[tuple[int, Future[None]]] = deque()
        """Background fsyncs not yet counted: (the offset they make durable, the fsync)."""
        self.segments: list[LogSegment] = []
        self.leader_epoch_cache = LeaderEpochCache(directory / "leader-epoch-checkpoint")
        self.producer_state = ProducerStateManager()
        self.snapshots = ProducerSnapshots(directory)
        self.log_start_offset = 0
        self.recovery_point = 0
        self.recovered_bytes_truncated = 0

    @classmethod
    def open(
        cls,
        directory: Path,
        config: LogConfig,
        now_ms: Callable[[], int],
        flusher: Executor | None = None,
        disk: Disk = DISK,
    ) -> Log:
        directory.mkdir(parents=True, exist_ok=True)
        plog = cls(directory, config, now_ms, flusher, disk)
        load(plog)
        return plog

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
        self,
        records: bytes | memoryview,
        leader_epoch: int,
        origin: AppendOrigin = AppendOrigin.CLIENT,
    ) -> AppendInfo:
        """Validate the one batch produced for this partition, then write it (or nothing).

        Only a coordinator (``origin``) may write control batches: transaction markers,
        checked against the producer's and the coordinator's epochs."""
        records, header = validate_leader_batch(records, self.config, self.producer_state, origin)
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
        # A batch in a buffer of its own (a big request's frame: ``protocol.framing``) gets
        # its offsets there, and goes to the file from it; another is copied to be patched.
        data: bytearray | memoryview
        if isinstance(records, memoryview) and not records.readonly:
            data = records
        else:
            data = bytearray(records)
        stamp(data, 0, first, leader_epoch)
        self._append_stamped(data)
        return AppendInfo(
            first,
            first + header.records_count - 1,
            self.now_ms() if self.config.log_append_time else -1,
            self.log_start_offset,
        )

    def append_as_follower(self, records: bytes | memoryview) -> AppendInfo:
        """Batches that already carry offsets and epochs, as the leader wrote them. Gaps
        between them are fine (a compacted leader's log); overlaps are not. A first batch
        that begins below the log end raises ``UnexpectedAppendOffsetError``: the one case
        that is no error, an empty log whose start lies inside that batch, is the
        partition's to handle (``Partition.append_as_follower``)."""
        pos = 0
        first = self.log_end_offset
        expected = first
        try:
            while pos < len(records):
                header = validate_batch(records, pos)
                if header.base_offset < expected:
                    message = f"batch at offset {header.base_offset}, log ends at {expected}"
                    if expected == first:
                        raise UnexpectedAppendOffsetError(
                            message, header.base_offset, header.last_offset
                        )
                    raise CorruptRecordError(message)
                self.leader_epoch_cache.assign(header.partition_leader_epoch, header.base_offset)
                expected = header.next_offset
                pos += header.size_in_bytes
        except InvalidBatchError as exc:
            raise CorruptRecordError(str(exc)) from exc
        self._append_stamped(records)
        return AppendInfo(first, expected - 1, -1, self.log_start_offset)

    def _append_stamped(self, data: bytes | bytearray | memoryview) -> None:
        pos = 0
        while pos < len(data):
            header = parse_header(data, pos)
            self._maybe_roll(header.size_in_bytes)
            batch = memoryview(data)[pos : pos + header.size_in_bytes]
            self.segments[-1].append(batch, header, self.config.index_interval_bytes)
            track_batch(
                self.producer_state,
                self.segments[-1],
                header,
                batch if header.is_control else None,
                index=True,
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

    def segment_index(self, offset: int) -> int:
        """The index in ``segments`` of the segment holding ``offset``."""
        for i in range(len(self.segments) - 1, -1, -1):
            if self.segments[i].base_offset <= offset:
                return i
        return 0

    def read(
        self, start_offset: int, max_bytes: int, max_offset: int, min_one_message: bool = True
    ) -> FetchData:
        """Whole batches from the one holding ``start_offset``, all below ``max_offset``,
        read into memory: for the broker's own readers (coordinators, the cleaner)."""
        found = self._locate(start_offset, max_bytes, max_offset, min_one_message)
        records = b"" if found is None else found[0].read_bytes(found[1], found[2] - found[1])
        return FetchData(records, self.log_start_offset, self.log_end_offset)

    def read_file_records(
        self, start_offset: int, max_bytes: int, max_offset: int, min_one_message: bool = True
    ) -> FetchedRecords:
        """The same batches as :meth:`read`, not read: named in their segment file for a
        Fetch response to send from there (``file_records``)."""
        found = self._locate(start_offset, max_bytes, max_offset, min_one_message)
        if found is None:
            return FetchedRecords(b"", start_offset)
        segment, start, end, next_offset = found
        return FetchedRecords(segment.file_records(start, end - start), next_offset)

    def _locate(
        self, start_offset: int, max_bytes: int, max_offset: int, min_one_message: bool
    ) -> tuple[LogSegment, int, int, int] | None:
        """Where a read's batches lie: ``(segment, start, end, next offset)``, or None when
        there are none. A segment with nothing at or after ``start_offset`` (compaction
        removed its last batches, or all of them) passes the read on to the next one, as
        in Kafka."""
        if start_offset < self.log_start_offset or start_offset > self.log_end_offset:
            raise OffsetOutOfRangeError(
                f"offset {start_offset} is outside [{self.log_start_offset}, {self.log_end_offset}]"
            )
        index = self.segment_index(start_offset)
        while start_offset < max_offset and index < len(self.segments):
            segment = self.segments[index]
            found = _locate_in_segment(
                segment, start_offset, max_bytes, max_offset, min_one_message
            )
            if found is not None:
                return (segment, *found)
            index += 1
        return None

    def bytes_between(self, start_offset: int, end_offset: int) -> int:
        """Roughly how many bytes of batches lie in [start, end): for fetch ``min_bytes``."""
        if end_offset <= start_offset:
            return 0
        first, last = self.segment_index(start_offset), self.segment_index(end_offset)
        if first == last:
            segment = self.segments[first]
            return max(segment.position_for(end_offset) - segment.position_for(start_offset), 1)
        total = self.segments[first].size - self.segments[first].position_for(start_offset)
        total += sum(s.size for s in self.segments[first + 1 : last])
        return total + self.segments[last].position_for(end_offset)

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

    def collect_aborted_transactions(self, start_offset: int, end_offset: int) -> list[AbortedTxn]:
        """Aborted transactions with records in ``[start_offset, end_offset)``: what a
        read_committed Fetch of that range lists for the client to filter by.

        A marker follows its transaction's records, so only segments from the one holding
        ``start_offset`` on can index one. The scan stops at an entry whose LSO was past
        ``end_offset`` when it was written: every transaction with records below
        ``end_offset`` had ended by then, so later entries cannot overlap (Kafka's rule)."""
        found: list[AbortedTxn] = []
        for segment in self.segments[self.segment_index(start_offset) :]:
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
        rebuild_producer_state(self)  # from the newest snapshot not above the new end

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
            discard(self.dir, base, self.disk)
            return False
        modified_ns = max(s.last_modified_ns for s in group)
        seal(self.dir, base, aborted, self.disk)
        for segment in group:
            segment.close()
        swap_in(self.dir, base, [s.base_offset for s in group], group[-1].next_offset, self.disk)
        cleaned = LogSegment(self.dir, base, group[0].created_ms)  # with the swapped index
        cleaned.load(self.config.index_interval_bytes)
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
