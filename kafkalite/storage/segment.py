"""One log segment: a ``.log`` file of record batches and its sparse ``.index``.

Files are named by the segment's base offset, zero-padded to 20 digits, as in Kafka::

    00000000000000000000.log     batches, back to back, exactly as served to consumers
    00000000000000000000.index   sparse offset index
    00000000000000000000.txnindex  aborted transactions whose marker is here (``txn_index``)

``.index`` layout: entries of 8 bytes, big-endian::

    relative offset  int32   batch base offset minus the segment's base offset
    position         int32   byte position of that batch in the .log file

An entry is added when at least ``index.interval.bytes`` were appended since the last
one, so a lookup reads the index (in memory) and then scans a few batch headers. The
index is only a hint: recovery rebuilds it from the ``.log`` whenever it is in doubt.

Opening a segment below the recovery point trusts its index (Kafka does too): only the
batches after the last index entry are read, to find where the segment ends. Its largest
timestamp, which only retention and timestamp lookups need, is read when first asked for.
So a broker with a gigabyte of log starts without reading the gigabyte.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import os
import struct
from collections.abc import Iterator
from concurrent.futures import Executor, Future
from pathlib import Path

from kafkalite.protocol.record_batch import (
    HEADER_SIZE,
    InvalidBatchError,
    RecordBatchHeader,
    parse_header,
)
from kafkalite.storage.file_records import FileRecords
from kafkalite.storage.txn_index import TransactionIndex

_INDEX_ENTRY = struct.Struct(">ii")
_SCAN_CHUNK = 1 << 20
_LOOKUP_CHUNK = 8 << 10
"""A lookup starts at a sparse-index entry and stops within about ``index.interval.bytes``:
it reads a few KiB at a time, never the megabyte a recovery scan reads."""


def segment_name(base_offset: int) -> str:
    return f"{base_offset:020d}"


class LogSegment:
    """Not thread-safe: owned by the ``Log`` that owns it."""

    def __init__(self, directory: Path, base_offset: int, created_ms: int) -> None:
        self.base_offset = base_offset
        self.log_path = directory / f"{segment_name(base_offset)}.log"
        self.index_path = directory / f"{segment_name(base_offset)}.index"
        self._fd = os.open(self.log_path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        self.size = os.fstat(self._fd).st_size
        self.next_offset = base_offset
        self._max_timestamp: int | None = -1  # None: not read yet (see ``max_timestamp``)
        self.created_ms = created_ms
        self._index_offsets: list[int] = []
        self._index_positions: list[int] = []
        self._bytes_since_index = 0
        self._tail: list[tuple[int, RecordBatchHeader]] = []
        self._tail_last_offsets: list[int] = []
        """Position and header of every batch from the last index entry on, and their
        last offsets (empty until an entry is made here: after ``load_from_index`` the
        batches past the last entry are not kept). A lookup there reads nothing: reads
        at the log end (followers, consumers that have caught up) are the usual ones."""
        self._index_fd = -1
        """The ``.index`` file, opened for appending at the first entry appended (opening
        it for every entry cost a produced batch more than its own write)."""
        self.txn_index = TransactionIndex(directory / f"{segment_name(base_offset)}.txnindex")

    # ---- loading -------------------------------------------------------------------

    def load(self, index_interval_bytes: int) -> None:
        """Rebuild offsets, timestamps and the index from the batches in the file."""
        self._index_offsets.clear()
        self._index_positions.clear()
        self._forget_tail()
        self._bytes_since_index = index_interval_bytes  # index the first batch
        self.next_offset = self.base_offset
        self._max_timestamp = -1
        for pos, header in self.scan(0):
            self._track(pos, header, index_interval_bytes)
        self._write_index()

    def load_from_index(self, index_interval_bytes: int) -> None:
        """Open a segment known to be intact (below the recovery point): take its index as
        written and read only the batches after the last entry. An index that does not
        fit the file (Kafka's ``sanityCheck``) is rebuilt by a full :meth:`load`."""
        entries = self._read_index()
        if entries is None:
            self.load(index_interval_bytes)
            return
        self._index_offsets = [o for o, _ in entries]
        self._index_positions = [p for _, p in entries]
        self._forget_tail()
        start = self._index_positions[-1] if entries else 0
        self.next_offset = self.base_offset
        self._bytes_since_index = index_interval_bytes if not entries else 0
        try:
            for pos, header in self.scan(start):
                self.next_offset = header.next_offset
                if pos > start:
                    self._bytes_since_index += header.size_in_bytes
        except InvalidBatchError:
            self.load(index_interval_bytes)
            return
        self._max_timestamp = None if self.size else -1

    def _read_index(self) -> list[tuple[int, int]] | None:
        """The index entries, or None when they cannot belong to this ``.log``."""
        try:
            data = self.index_path.read_bytes()
        except FileNotFoundError:
            return None if self.size else []
        if len(data) % _INDEX_ENTRY.size or (self.size and not data):
            return None
        entries = [
            (relative + self.base_offset, position)
            for relative, position in _INDEX_ENTRY.iter_unpack(data)
        ]
        ordered = all(a[0] < b[0] and a[1] < b[1] for a, b in itertools.pairwise(entries))
        if not ordered or (entries and (entries[0][1] != 0 or entries[-1][1] >= self.size)):
            return None
        return entries

    @property
    def max_timestamp(self) -> int:
        """The largest batch timestamp in the segment (-1 when empty)."""
        if self._max_timestamp is None:
            self._max_timestamp = max((h.max_timestamp for _, h in self.scan(0)), default=-1)
        return self._max_timestamp

    def scan(
        self, start: int, end: int | None = None, chunk_bytes: int = _SCAN_CHUNK
    ) -> Iterator[tuple[int, RecordBatchHeader]]:
        """Headers of the complete batches from ``start``, read ``chunk_bytes`` at a time
        (a batch bigger than that is skipped over, not read)."""
        end = self.size if end is None else end
        pos = start
        while pos < end:
            chunk = os.pread(self._fd, min(chunk_bytes, end - pos), pos)
            cursor = 0
            while len(chunk) - cursor >= HEADER_SIZE:
                header = parse_header(chunk, cursor)
                if header.size_in_bytes > len(chunk) - cursor and cursor > 0:
                    break
                yield pos + cursor, header
                cursor += header.size_in_bytes
            if cursor == 0:
                if end - pos < HEADER_SIZE:
                    return
                raise InvalidBatchError(f"unreadable batch at position {pos}")
            pos += cursor

    # ---- writing -------------------------------------------------------------------

    def append(
        self, batch: bytes | memoryview, header: RecordBatchHeader, index_interval_bytes: int
    ) -> None:
        position = self.size
        os.write(self._fd, batch)
        self.size += len(batch)
        if self._track(position, header, index_interval_bytes):
            if self._index_fd < 0:
                flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
                self._index_fd = os.open(self.index_path, flags, 0o644)
            os.write(
                self._index_fd, _INDEX_ENTRY.pack(header.base_offset - self.base_offset, position)
            )

    def _track(self, position: int, header: RecordBatchHeader, interval: int) -> bool:
        """Account for one batch; True when it gets an index entry."""
        self.next_offset = header.next_offset
        self._max_timestamp = max(self.max_timestamp, header.max_timestamp)
        self._bytes_since_index += header.size_in_bytes
        if self._bytes_since_index < interval and self._index_offsets:
            if self._tail:
                self._tail.append((position, header))
                self._tail_last_offsets.append(header.last_offset)
            return False
        self._index_offsets.append(header.base_offset)
        self._index_positions.append(position)
        self._bytes_since_index = 0
        self._tail = [(position, header)]
        self._tail_last_offsets = [header.last_offset]
        return True

    def _forget_tail(self) -> None:
        self._tail = []
        self._tail_last_offsets = []

    def _write_index(self) -> None:
        data = b"".join(
            _INDEX_ENTRY.pack(o - self.base_offset, p)
            for o, p in zip(self._index_offsets, self._index_positions, strict=True)
        )
        self.index_path.write_bytes(data)

    def truncate_to_position(self, position: int, index_interval_bytes: int) -> None:
        os.ftruncate(self._fd, position)
        self.size = position
        self.load(index_interval_bytes)

    @property
    def last_modified_ns(self) -> int:
        """When the ``.log`` file was last written (the log cleaner ages tombstones by it)."""
        return os.fstat(self._fd).st_mtime_ns

    def set_last_modified_ns(self, modified_ns: int) -> None:
        os.utime(self._fd, ns=(modified_ns, modified_ns))

    def flush_later(self, flusher: Executor | None) -> Future[None]:
        """fsync in ``flusher`` (a background thread; inline when None) on a duplicate of
        the file descriptor, so that closing or deleting the segment meanwhile is harmless.
        The future's exception is a disk error."""
        fd = os.dup(self._fd)

        def flush() -> None:
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            with contextlib.suppress(FileNotFoundError):  # deleted meanwhile
                self.txn_index.flush()

        if flusher is not None:
            return flusher.submit(flush)
        done: Future[None] = Future()
        flush()
        done.set_result(None)
        return done

    def flush(self) -> None:
        """fsync the ``.log`` (the ``.index`` is a hint: checked when loaded, rebuilt if
        it does not fit) and the aborted-transaction index."""
        os.fsync(self._fd)
        self.txn_index.flush()

    def close(self) -> None:
        os.close(self._fd)
        if self._index_fd >= 0:
            os.close(self._index_fd)
            self._index_fd = -1

    def delete(self) -> None:
        self.close()
        self.log_path.unlink(missing_ok=True)
        self.index_path.unlink(missing_ok=True)
        self.txn_index.delete()

    # ---- reading -------------------------------------------------------------------

    def read_bytes(self, position: int, size: int) -> bytes:
        return os.pread(self._fd, size, position)

    def position_for(self, offset: int) -> int:
        """Position of the batch holding ``offset`` (or the first after it); size if none."""
        return self.batch_at(offset)[0]

    def batch_at(self, offset: int) -> tuple[int, RecordBatchHeader | None]:
        """Position and header of the batch holding ``offset`` (or the first after it);
        ``(size, None)`` if none: the sparse index, then a few headers."""
        if offset >= self.next_offset:
            return self.size, None
        tail = self._tail
        if tail and offset >= tail[0][1].base_offset:
            return tail[bisect.bisect_left(self._tail_last_offsets, offset)]
        i = bisect.bisect_right(self._index_offsets, offset) - 1
        start = self._index_positions[i] if i >= 0 else 0
        for pos, header in self.scan(start, chunk_bytes=_LOOKUP_CHUNK):
            if header.last_offset >= offset:
                return pos, header
        return self.size, None

    def boundary_at_or_below(self, limit: int, start: int) -> tuple[int, RecordBatchHeader]:
        """The last batch boundary at or below position ``limit`` and at or after ``start``
        (a boundary), with the header of the batch that begins there; ``limit`` must lie
        before the end of the segment's last batch. Where a Fetch's byte budget ends."""
        i = bisect.bisect_right(self._index_positions, limit) - 1
        pos = max(self._index_positions[i], start) if i >= 0 else start
        for at, header in self.scan(pos, chunk_bytes=_LOOKUP_CHUNK):
            if at + header.size_in_bytes > limit:
                return at, header
        raise ValueError(f"position {limit} is past the last batch of {self.log_path}")

    def file_records(self, position: int, size: int) -> FileRecords:
        """``size`` bytes from ``position``, not read: a slice that stays readable after
        this segment is closed or deleted (see ``file_records``)."""
        return FileRecords(os.dup(self._fd), position, size)
