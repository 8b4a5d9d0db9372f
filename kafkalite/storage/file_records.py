"""Whole batches of a segment file, named by position and size and never read: what a Fetch
response sends from the file to the socket with ``sendfile`` (Kafka's ``FileRecords``).

A Fetch answers with the very bytes the log holds, so the broker need not copy them
through Python at all: the kernel moves them from the page cache to the socket. The
response is sent after the handler returns, while other requests run: meanwhile the
segment may be closed, deleted (retention, a deleted topic), swapped by the cleaner or
truncated. So a ``FileRecords`` holds its own descriptor of the file (a ``dup``): the
bytes it names stay readable whatever happens to the segment, except a truncation, which
the sender notices as a short send (Kafka closes the connection then too).

The descriptor is closed by ``close`` once the bytes are sent, or when the object is
dropped unsent (a connection that closed first).
"""

from __future__ import annotations

import os


class FileRecords:
    """``size`` bytes of the file ``fd`` from ``position``; owns ``fd``."""

    __slots__ = ("fd", "position", "size")

    def __init__(self, fd: int, position: int, size: int) -> None:
        self.fd = fd
        self.position = position
        self.size = size

    def __len__(self) -> int:
        return self.size

    def read(self) -> bytes:
        """The bytes themselves: for a reader that must look inside (never a Fetch)."""
        data = os.pread(self.fd, self.size, self.position)
        if len(data) != self.size:
            raise OSError(f"{self.size} bytes at {self.position} expected, {len(data)} read")
        return data

    def close(self) -> None:
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)

    def __del__(self) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"FileRecords(fd={self.fd}, position={self.position}, size={self.size})"


Records = bytes | FileRecords
"""A Fetch response's records: bytes (empty, or built in memory) or a file slice."""
