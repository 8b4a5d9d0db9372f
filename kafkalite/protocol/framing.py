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


class FrameSplitter:
    """Bytes in, whole frames (without their size prefix) out, in order.

    The common read (one request, whole) returns a slice of what was read, with no copy
    into a buffer; only a frame cut across reads is buffered."""

    def __init__(self, max_frame_bytes: int) -> None:
        self.max_frame_bytes = max_frame_bytes
        self._partial = bytearray()
        self.error: FrameSizeError | None = None
        """Set at the first size out of bounds: the stream ends there, and whatever
        follows it is ignored."""

    @property
    def buffered(self) -> int:
        """Bytes received that do not yet make a whole frame."""
        return len(self._partial)

    def feed(self, data: bytes) -> list[bytes]:
        """The frames ``data`` completes. At a size out of bounds, the frames before it
        are returned, ``error`` is set, and nothing more is read."""
        if self.error is not None:
            return []
        if self._partial:
            self._partial += data
            stream: bytes | bytearray = self._partial
        else:
            stream = data
        frames: list[bytes] = []
        position, end = 0, len(stream)
        limit = self.max_frame_bytes
        while end - position >= 4:
            size = _SIZE.unpack_from(stream, position)[0]
            if size < 0 or size > limit:
                self.error = FrameSizeError(size, limit)
                self._partial = bytearray()
                return frames
            start = position + 4
            if end - start < size:
                break
            frames.append(bytes(stream[start : start + size]))
            position = start + size
        if stream is self._partial:
            del self._partial[:position]
        elif position < end:
            self._partial = bytearray(stream[position:])
        return frames
