"""The replicated log of the metadata quorum, with Kafka's leader-epoch cache.

Offsets run from ``log_start_offset`` (everything below is covered by a snapshot) to
``end_offset`` (the LEO, exclusive). Each entry carries the epoch of the leader that wrote
it; the epoch cache keeps, per epoch, the offset where that epoch starts, which is what a
leader needs to answer "where does your log stop agreeing with mine?" in one round trip
(``end_offset_for_epoch``, Kafka's ``OffsetsForLeaderEpoch`` logic folded into Fetch).

Durability is explicit: appends and truncations are volatile until ``flush()``. The leader
counts only its flushed end offset towards the high watermark and a follower flushes
before it reports a fetch offset, so "majority acknowledged" means "on a majority's disk".

``RaftLog`` keeps the entries in memory (the metadata log is small); subclasses decide what
survives a crash: ``MemoryRaftLog`` models it for the simulation, ``FileRaftLog``
(``file_log.py``) writes a file.
"""

from __future__ import annotations

import bisect
import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kafkalite.raft.snapshot import MemorySnapshotStore, OffsetAndEpoch, Snapshot, SnapshotStore


@dataclass(frozen=True, slots=True)
class Entry:
    """One record of the metadata log; ``control`` marks quorum records such as
    LeaderChange that the state machine skips (Kafka's control batches)."""

    offset: int
    epoch: int
    payload: bytes
    control: bool = False


class LogInvariantError(RuntimeError):
    """The log was asked to do something that would break Raft (a bug, never a fault)."""


class ValidationKind(enum.Enum):
    VALID = "valid"
    DIVERGING = "diverging"
    SNAPSHOT = "snapshot"


@dataclass(frozen=True, slots=True)
class ValidOffsetAndEpoch:
    """Kafka's ``ValidOffsetAndEpoch``: how a leader answers a follower's fetch position."""

    kind: ValidationKind
    offset_and_epoch: OffsetAndEpoch


class RaftLog:
    """Entries, epoch cache and snapshots of one replica. Not thread-safe: one owner."""

    def __init__(
        self,
        snapshots: SnapshotStore | None = None,
        entries: Iterable[Entry] = (),
        log_start_offset: int = 0,
    ) -> None:
        self.snapshots: SnapshotStore = snapshots or MemorySnapshotStore()
        self._start = log_start_offset
        self._base_epoch = 0
        snapshot = self.snapshots.latest()
        self._latest_snapshot_id = snapshot.snapshot_id if snapshot is not None else None
        """Kept here, not asked of the store: every quorum Fetch checks it, and a file
        store finds its latest snapshot by listing, reading and checksumming files."""
        if snapshot is not None and snapshot.snapshot_id.end_offset >= self._start:
            if snapshot.snapshot_id.end_offset > self._start:
                entries = [e for e in entries if e.offset >= snapshot.snapshot_id.end_offset]
            self._start = snapshot.snapshot_id.end_offset
            self._base_epoch = snapshot.snapshot_id.epoch
        self._entries: list[Entry] = []
        self._epochs: list[tuple[int, int]] = []  # (epoch, start offset), ascending
        for entry in entries:
            self._append_entry(entry)
        self._flushed_end = self.end_offset

    # ---- reading -------------------------------------------------------------------------
    @property
    def log_start_offset(self) -> int:
        return self._start

    @property
    def end_offset(self) -> int:
        """The log end offset (LEO): the offset the next entry gets."""
        return self._start + len(self._entries)

    @property
    def flushed_end_offset(self) -> int:
        return self._flushed_end

    @property
    def last_fetched_epoch(self) -> int:
        """Epoch of the last entry (or of the snapshot when the log is empty past it)."""
        return self._entries[-1].epoch if self._entries else self._base_epoch

    def last_offset_and_epoch(self) -> OffsetAndEpoch:
        """(LEO, last epoch): what a candidate sends and a voter compares in Vote."""
        return OffsetAndEpoch(self.end_offset, self.last_fetched_epoch)

    def entry_at(self, offset: int) -> Entry | None:
        if self._start <= offset < self.end_offset:
            return self._entries[offset - self._start]
        return None

    def read(self, start: int, max_entries: int, end: int | None = None) -> tuple[Entry, ...]:
        """Entries from ``start`` up to ``end`` (default LEO), at most ``max_entries``."""
        stop = min(self.end_offset if end is None else end, start + max_entries)
        if start < self._start or start >= stop:
            return ()
        return tuple(self._entries[start - self._start : stop - self._start])

    def epoch_entries(self) -> list[tuple[int, int]]:
        """The epoch cache as (epoch, start_offset) pairs, for introspection."""
        return list(self._epochs)

    def end_offset_for_epoch(self, epoch: int) -> OffsetAndEpoch:
        """The largest epoch <= ``epoch`` in this log and the offset where it ends.

        Like Kafka's ``LeaderEpochFileCache.endOffsetFor``: (-1, -1) if ``epoch`` is older
        than anything the log (or its snapshot) knows.
        """
        i = bisect.bisect_right(self._epochs, (epoch, float("inf"))) - 1
        if i >= 0:
            found, _ = self._epochs[i]
            end = self._epochs[i + 1][1] if i + 1 < len(self._epochs) else self.end_offset
            return OffsetAndEpoch(end, found)
        if epoch >= self._base_epoch:
            return OffsetAndEpoch(self._start, self._base_epoch)
        return OffsetAndEpoch(-1, -1)

    def validate_offset_and_epoch(self, offset: int, epoch: int) -> ValidOffsetAndEpoch:
        """Leader side of Fetch: is (``fetch_offset``, ``last_fetched_epoch``) a prefix of
        this log? If not, send the follower to the snapshot or tell it where to truncate."""
        snapshot = self.latest_snapshot_id()
        if snapshot is not None and (
            offset < self._start
            or (offset == self._start and epoch != snapshot.epoch)
            or epoch < snapshot.epoch
        ):
            return ValidOffsetAndEpoch(ValidationKind.SNAPSHOT, snapshot)
        end = self.end_offset_for_epoch(epoch)
        if end.epoch != epoch or end.end_offset < offset:
            return ValidOffsetAndEpoch(ValidationKind.DIVERGING, end)
        return ValidOffsetAndEpoch(ValidationKind.VALID, OffsetAndEpoch(offset, epoch))

    # ---- writing -------------------------------------------------------------------------
    def append_as_leader(
        self, payloads: Sequence[bytes], epoch: int, *, control: bool = False
    ) -> list[Entry]:
        """Assign offsets to ``payloads`` in ``epoch`` and append them (not yet flushed)."""
        if epoch < self.last_fetched_epoch:
            raise LogInvariantError(f"append in epoch {epoch} after {self.last_fetched_epoch}")
        entries = [Entry(self.end_offset + i, epoch, p, control) for i, p in enumerate(payloads)]
        for entry in entries:
            self._append_entry(entry)
        self._on_append(entries)
        return entries

    def append_as_follower(self, entries: Sequence[Entry]) -> None:
        """Append the leader's entries; they must continue this log exactly."""
        for entry in entries:
            if entry.offset != self.end_offset or entry.epoch < self.last_fetched_epoch:
                raise LogInvariantError(f"{entry} does not continue log at {self.end_offset}")
            self._append_entry(entry)
        self._on_append(list(entries))

    def truncate_to(self, offset: int) -> None:
        """Drop every entry at or above ``offset`` (volatile until the next flush)."""
        if offset < self._start:
            raise LogInvariantError(f"truncate to {offset} below log start {self._start}")
        if offset >= self.end_offset:
            return
        del self._entries[offset - self._start :]
        while self._epochs and self._epochs[-1][1] >= offset:
            self._epochs.pop()
        self._flushed_end = min(self._flushed_end, offset)
        self._on_truncate(offset)

    def truncate_to_end_offset(self, diverging: OffsetAndEpoch) -> int:
        """Follower side of a ``diverging_epoch``: Kafka's ``truncateToEndOffset``."""
        if diverging.epoch <= 0:
            offset = min(diverging.end_offset, self.end_offset)
        else:
            local = self.end_offset_for_epoch(diverging.epoch)
            if local.epoch == diverging.epoch:
                offset = min(local.end_offset, diverging.end_offset)
            else:
                offset = local.end_offset
        offset = max(offset, self._start)
        self.truncate_to(offset)
        return offset

    def flush(self) -> None:
        """The durability point: everything appended so far survives a crash."""
        self._on_flush()
        self._flushed_end = self.end_offset

    # ---- snapshots -----------------------------------------------------------------------
    def latest_snapshot_id(self) -> OffsetAndEpoch | None:
        return self._latest_snapshot_id

    def _saved(self, snapshot: Snapshot) -> None:
        self.snapshots.save(snapshot)
        latest = self._latest_snapshot_id
        if latest is None or snapshot.snapshot_id > latest:
            self._latest_snapshot_id = snapshot.snapshot_id

    def create_snapshot(self, end_offset: int, data: bytes) -> OffsetAndEpoch:
        """Store the state machine as of ``end_offset`` and drop the log prefix it covers.

        The caller (the node) guarantees ``end_offset`` is committed and applied.
        """
        last = self.entry_at(end_offset - 1)
        if last is None:
            raise LogInvariantError(f"no entry below {end_offset} to snapshot")
        snapshot_id = OffsetAndEpoch(end_offset, last.epoch)
        self._saved(Snapshot(snapshot_id, data))
        self._delete_before(snapshot_id)
        return snapshot_id

    def truncate_to_snapshot(self, snapshot: Snapshot) -> None:
        """Install a snapshot fetched from the leader: the log restarts right after it."""
        self._saved(snapshot)
        self._entries.clear()
        self._epochs.clear()
        self._start = snapshot.snapshot_id.end_offset
        self._base_epoch = snapshot.snapshot_id.epoch
        self._flushed_end = self._start
        self._on_reset()

    def _delete_before(self, snapshot_id: OffsetAndEpoch) -> None:
        new_start = snapshot_id.end_offset
        del self._entries[: new_start - self._start]
        kept = [(e, s) for e, s in self._epochs if s >= new_start]
        dropped = [(e, s) for e, s in self._epochs if s < new_start]
        if dropped and (not kept or kept[0][1] != new_start):
            kept.insert(0, (dropped[-1][0], new_start))
        self._epochs = kept
        self._start = new_start
        self._base_epoch = snapshot_id.epoch
        self._on_reset()

    def _append_entry(self, entry: Entry) -> None:
        if not self._epochs or self._epochs[-1][0] < entry.epoch:
            self._epochs.append((entry.epoch, entry.offset))
        self._entries.append(entry)

    # ---- durability hooks for subclasses -------------------------------------------------
    def _on_append(self, entries: list[Entry]) -> None:
        """Called after entries were appended in memory."""

    def _on_truncate(self, offset: int) -> None:
        """Called after the tail from ``offset`` was dropped in memory."""

    def _on_flush(self) -> None:
        """Make everything durable."""

    def _on_reset(self) -> None:
        """Called after the log start moved (prefix deleted or snapshot installed)."""


class MemoryRaftLog(RaftLog):
    """A log for simulations: ``crash()`` returns what a restarted node would find on disk,
    which is the entries as of the last ``flush()`` (a truncation not yet flushed is undone,
    as an unsynced ``ftruncate`` can be). Moving the log start rewrites and syncs the log,
    as ``FileRaftLog`` does."""

    def __init__(
        self,
        snapshots: SnapshotStore | None = None,
        entries: Iterable[Entry] = (),
        log_start_offset: int = 0,
    ) -> None:
        super().__init__(snapshots, entries, log_start_offset)
        self._durable: list[Entry] = list(self._entries)
        self._durable_start = self._start

    def _on_flush(self) -> None:
        self._durable = list(self._entries)
        self._durable_start = self._start

    def _on_reset(self) -> None:
        self._on_flush()

    def crash(self) -> MemoryRaftLog:
        """The log a restarted process would open: only the flushed state survives."""
        return MemoryRaftLog(self.snapshots, self._durable, self._durable_start)
