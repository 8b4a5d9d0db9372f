"""``FileRaftLog``: the metadata log in one file, so a broker can use the quorum as is.

Layout (big-endian)::

    header  b"KLRL" | u32 crc32c(start, epoch) | i64 log_start_offset | i32 base_epoch
    record  u32 length(body) | u32 crc32c(body) | body
    body    i64 offset | i32 epoch | u8 control | payload bytes

Appends are buffered writes; ``flush()`` is ``fsync``. On open, records are read until the
first one that is short, fails its CRC or does not continue the offsets: that is a torn
tail from a crash mid-write, and the file is truncated there (unflushed data is allowed to
be lost; flushed data is never torn). Moving the log start (snapshot) rewrites the file
atomically. Entries are also kept in memory by ``RaftLog``: the metadata log is small.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path
from typing import BinaryIO

import crc32c

from kafkalite.raft.log import Entry, RaftLog
from kafkalite.raft.snapshot import FileSnapshotStore, SnapshotStore, write_atomically

_MAGIC = b"KLRL"
_HEADER = struct.Struct(">4sIqi")
_FRAME = struct.Struct(">II")
_BODY = struct.Struct(">qiB")
LOG_FILE = "raft.log"


def _encode(entry: Entry) -> bytes:
    body = _BODY.pack(entry.offset, entry.epoch, int(entry.control)) + entry.payload
    return _FRAME.pack(len(body), crc32c.crc32c(body)) + body


def _header(start: int, epoch: int) -> bytes:
    crc = crc32c.crc32c(struct.pack(">qi", start, epoch))
    return _HEADER.pack(_MAGIC, crc, start, epoch)


def _parse(raw: bytes) -> tuple[int, list[Entry], list[int], int]:
    """(log start, entries, their byte positions, end of the last good record)."""
    if len(raw) < _HEADER.size:
        return 0, [], [], 0
    magic, crc, start, epoch = _HEADER.unpack_from(raw)
    if magic != _MAGIC or crc != crc32c.crc32c(struct.pack(">qi", start, epoch)):
        raise ValueError("corrupt raft log header")
    entries: list[Entry] = []
    positions: list[int] = []
    pos = _HEADER.size
    while pos + _FRAME.size <= len(raw):
        length, crc = _FRAME.unpack_from(raw, pos)
        body = raw[pos + _FRAME.size : pos + _FRAME.size + length]
        if length < _BODY.size or len(body) < length or crc32c.crc32c(body) != crc:
            break
        offset, entry_epoch, control = _BODY.unpack_from(body)
        if offset != start + len(entries):
            break
        entries.append(Entry(offset, entry_epoch, bytes(body[_BODY.size :]), bool(control)))
        positions.append(pos)
        pos += _FRAME.size + length
    return start, entries, positions, pos


class FileRaftLog(RaftLog):
    """A ``RaftLog`` persisted in ``directory/raft.log`` with snapshots beside it.

    Not thread-safe: one owner (the task that drives the ``RaftNode``). Call ``close()``.
    """

    def __init__(self, directory: Path, snapshots: SnapshotStore | None = None) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / LOG_FILE
        raw = self.path.read_bytes() if self.path.exists() else b""
        start, entries, positions, good_end = _parse(raw)
        self.truncated_bytes = max(0, len(raw) - good_end) if raw else 0
        super().__init__(snapshots or FileSnapshotStore(directory / "snapshots"), entries, start)
        self._positions = positions
        self._file: BinaryIO
        if not raw or self._start != start or len(self._entries) != len(entries):
            self._rewrite()
        else:
            self._file = open(self.path, "r+b")  # noqa: SIM115 - held open for appends
            if self.truncated_bytes:
                self._file.truncate(good_end)
                os.fsync(self._file.fileno())
            self._size = good_end
            self._file.seek(good_end)

    def _rewrite(self) -> None:
        chunks = [_header(self._start, self._base_epoch)]
        self._positions = []
        size = len(chunks[0])
        for entry in self._entries:
            chunk = _encode(entry)
            self._positions.append(size)
            chunks.append(chunk)
            size += len(chunk)
        if hasattr(self, "_file"):
            self._file.close()
        write_atomically(self.path, b"".join(chunks))
        self._file = open(self.path, "r+b")  # noqa: SIM115 - held open for appends
        self._size = size
        self._file.seek(size)

    def _on_append(self, entries: list[Entry]) -> None:
        for entry in entries:
            chunk = _encode(entry)
            self._positions.append(self._size)
            self._file.write(chunk)
            self._size += len(chunk)

    def _on_truncate(self, offset: int) -> None:
        index = offset - self._start
        self._size = self._positions[index]
        del self._positions[index:]
        self._file.flush()
        self._file.truncate(self._size)
        self._file.seek(self._size)

    def _on_flush(self) -> None:
        self._file.flush()
        os.fsync(self._file.fileno())

    def _on_reset(self) -> None:
        self._rewrite()

    def close(self) -> None:
        self._file.close()
