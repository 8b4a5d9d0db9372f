"""Sending a response frame: its byte parts through the transport, its file slices by
``sendfile``, in order.

A Fetch response (``protocol.fetch_response``) is framing bytes with each partition's
records between them, named in their segment file (``storage.file_records``). The
kernel copies those from the page cache to the socket (``os.sendfile``), as Kafka's
``FileRecords.writeTo`` does with ``transferTo``: no byte of them passes through Python.

Order on the wire is what matters. The transport queues what the socket does not take at
once; a slice may go straight to the socket only when that queue is empty, else it would
overtake bytes written before it. So a slice is sent directly while the queue is empty
and the socket takes it, and what is left goes through ``loop.sendfile``, which waits for
the queue to drain and for the socket to take more. The parts of an answer with slices
are written corked (``FrameStream.cork``), so that they leave together. A slice whose
file has shrunk since the read (the log was truncated meanwhile) cannot be sent whole:
the frame would be cut short, so the connection is closed, as Kafka closes it.
"""

from __future__ import annotations

import asyncio
import io
import os
from collections.abc import Sized

from kafkalite.network.frame_stream import FrameStream
from kafkalite.storage.file_records import FileRecords

Frame = bytes | list[bytes | Sized]


class TruncatedFileError(ConnectionError):
    """A slice's file ended before the slice did: its frame cannot be completed."""


async def send_frame(writer: FrameStream, frame: Frame) -> None:
    """Write ``frame`` (bytes, or parts), then wait until the transport can take more."""
    if isinstance(frame, bytes):
        writer.write(frame)
    else:
        try:
            await _send_parts(writer, frame)
        finally:
            for part in frame:
                if isinstance(part, FileRecords):
                    part.close()
    await writer.drain()


async def _send_parts(writer: FrameStream, parts: list[bytes | Sized]) -> None:
    """Consecutive byte parts go in one write (one ``send``), not one each. From the
    first file slice on the stream is corked: the answer leaves as one, not as a segment
    a part (``FrameStream.cork``)."""
    pending: list[bytes | bytearray | memoryview] = []
    corked = False
    try:
        for part in parts:
            if isinstance(part, FileRecords):
                if not corked:
                    writer.cork()
                    corked = True
                if pending:
                    writer.write(b"".join(pending))
                    pending.clear()
                await _send_file(writer, part)
            elif isinstance(part, bytes | bytearray | memoryview):
                pending.append(part)
            else:
                raise TypeError(f"cannot send a {type(part).__name__}")
        if pending:
            writer.write(b"".join(pending))
    finally:
        if corked:
            writer.uncork()


def frame_bytes(frame: Frame) -> bytes:
    """The whole frame in memory, file slices read: for a listener that writes responses
    as they complete (the controller listener), where a ``sendfile`` that waits for the
    socket would let another response in between."""
    if isinstance(frame, bytes):
        return frame
    out = bytearray()
    for part in frame:
        if isinstance(part, FileRecords):
            out += part.read()
            part.close()
        elif isinstance(part, bytes | bytearray | memoryview):
            out += part
        else:
            raise TypeError(f"cannot send a {type(part).__name__}")
    return bytes(out)


async def _send_file(writer: FrameStream, records: FileRecords) -> None:
    transport = writer.transport
    if transport.is_closing():
        raise ConnectionResetError("the connection closed before the records were sent")
    offset, remaining = records.position, records.size
    if transport.get_write_buffer_size() == 0:
        out = writer.socket.fileno()
        try:
            while remaining:
                sent = os.sendfile(out, records.fd, offset, remaining)
                if sent == 0:
                    raise TruncatedFileError(f"{records} was cut short while being sent")
                offset += sent
                remaining -= sent
        except BlockingIOError:
            pass  # the socket is full: the loop waits for it below
    if remaining:
        with io.FileIO(os.dup(records.fd), "rb") as file:
            sent = await asyncio.get_running_loop().sendfile(transport, file, offset, remaining)
        if sent != remaining:
            raise TruncatedFileError(f"{records} was cut short while being sent")
