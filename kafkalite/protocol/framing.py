"""Splitting a byte stream into Kafka's size-prefixed frames. No I/O here.

On the wire every request (and response) is one frame::

    +----------------+---------------------------+
    | size: int32 BE | size bytes (header, body) |
    +----------------+---------------------------+

TCP delivers a stream, not frames: one read may hold a frame's first bytes only, several
whole frames, or the end of one and the start of the next. ``FrameSplitter`` is fed what
each read brought and returns the whole frames it completes, keeping the rest. A size
above the listener's ``socket.request.max.bytes`` (or negative) is refused as soon as its
four bytes are in, before any of the frame is buffered, as Kafka refuses it.
"""

from __future__ import annotations

import struct

_SIZE = struct.Struct(">i")


class FrameSizeError(ValueError):
    """A frame's size prefix is negative or above the limit: the stream cannot go on."""

    def __init__(self, size: int, max_frame_bytes: int) -> None:
        super().__init__(
            f"frame of {size} bytes exceeds socket.request.max.bytes ({max_frame_bytes})"
        )
        self.size = size


SMALL_READ_BYTES = 16 * 1024
"""A read below this size is copied into the frame's gathering buffer instead of kept as
a piece of its own."""


class FrameSplitter:
    """Bytes in, whole frames (without their size prefix) out, in order.

    A frame inside one read is sliced out of it: one copy. A frame cut across reads (a
    64 KiB Produce batch usually is, and a follower's 1 MiB Fetch answer always: the loop
    reads at most 256 KiB at a time) is kept as views of the reads that carried it and
    joined once its last byte is in, not grown and re-copied per read (which cost 1.4 ms
    per 1 MiB frame). Small reads are gathered into one buffer as they come, so a peer
    that sends a few bytes at a time costs neither an object per read nor a copy of the
    whole frame per read.
    """

    def __init__(self, max_frame_bytes: int) -> None:
        self.max_frame_bytes = max_frame_bytes
        self._chunks: list[memoryview | bytearray] = []
        """The pieces of the frame in progress, its size prefix first: views of big
        reads, and buffers that gathered small ones."""
        self._buffered = 0
        self._needed = 0
        """The frame in progress's length with its prefix; 0 while the prefix is cut."""
        self.error: FrameSizeError | None = None
        """Set at the first size out of bounds: the stream ends there, and whatever
        follows it is ignored."""

    @property
    def buffered(self) -> int:
        """Bytes received that do not yet make a whole frame."""
        return self._buffered

    def feed(self, data: bytes) -> list[bytes]:
        """The frames ``data`` completes. At a size out of bounds, the frames before it
        are returned, ``error`` is set, and nothing more is read."""
        if self.error is not None:
            return []
        view = memoryview(data)
        frames: list[bytes] = []
        if self._chunks:
            self._keep(view)
            if not self._needed:  # the prefix was cut: rare, and its piece is short
                view = memoryview(b"".join(self._chunks))
            elif self._buffered < self._needed:
                return frames
            else:
                view = self._complete(frames)
            self._chunks, self._buffered, self._needed = [], 0, 0
        self._split(view, frames)
        return frames

    def _keep(self, view: memoryview) -> None:
        chunks = self._chunks
        self._buffered += len(view)
        if len(view) >= SMALL_READ_BYTES:
            chunks.append(view)
        elif isinstance(chunks[-1], bytearray):
            chunks[-1] += view
        else:
            chunks.append(bytearray(view))

    def _complete(self, frames: list[bytes]) -> memoryview:
        """Join the frame in progress, whose last byte is in; returns what the last
        piece holds after it."""
        pieces = [memoryview(chunk) for chunk in self._chunks]
        last = pieces[-1]
        cut = len(last) - (self._buffered - self._needed)
        pieces[0], pieces[-1] = pieces[0][4:], last[:cut]
        frames.append(b"".join(pieces))
        return last[cut:]

    def _split(self, view: memoryview, frames: list[bytes]) -> None:
        """Append the whole frames at the start of ``view`` to ``frames``; keep the rest."""
        position, end = 0, len(view)
        limit = self.max_frame_bytes
        while end - position >= 4:
            size = _SIZE.unpack_from(view, position)[0]
            if size < 0 or size > limit:
                self.error = FrameSizeError(size, limit)
                return
            start = position + 4
            if end - start < size:
                self._needed = 4 + size
                break
            frames.append(bytes(view[start : start + size]))
            position = start + size
        if position < end:
            self._chunks = [view[position:]]
            self._buffered = end - position
