"""Splitting a byte stream into size-prefixed frames, however the reads cut it."""

from __future__ import annotations

import itertools
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalite.protocol.framing import EAGER_FRAME_BYTES, FrameSizeError, FrameSplitter

pytestmark = pytest.mark.unit


def framed(*payloads: bytes) -> bytes:
    return b"".join(struct.pack(">i", len(p)) + p for p in payloads)


def feed(splitter: FrameSplitter, data: bytes) -> list[bytes]:
    """What one read of ``data`` completes, read as a socket would: into the buffers the
    splitter gives, each filled as far as ``data`` goes."""
    frames: list[bytes] = []
    while data:
        with splitter.buffer() as buffer:  # released, as the loop's is, before the next
            assert len(buffer) > 0
            n = min(len(buffer), len(data))
            buffer[:n] = data[:n]
        frames += [bytes(frame) for frame in splitter.received(n)]
        data = data[n:]
    return frames


def test_whole_frames_in_one_read() -> None:
    splitter = FrameSplitter(100)
    assert feed(splitter, framed(b"one", b"", b"three")) == [b"one", b"", b"three"]
    assert splitter.buffered == 0


def test_a_frame_cut_across_reads_is_kept_until_whole() -> None:
    splitter = FrameSplitter(100)
    data = framed(b"first", b"second")
    assert feed(splitter, data[:2]) == []  # half a size
    assert feed(splitter, data[2:7]) == []  # the size and one byte
    assert splitter.buffered == 7
    assert feed(splitter, data[7:12]) == [b"first"]  # and the next one's first three bytes
    assert splitter.buffered == 3
    assert feed(splitter, data[12:]) == [b"second"]
    assert splitter.buffered == 0


@given(
    payloads=st.lists(st.binary(max_size=40), max_size=8),
    cuts=st.lists(st.integers(0, 400), max_size=10),
)
@settings(max_examples=200, deadline=None)
def test_any_cutting_gives_the_same_frames(payloads: list[bytes], cuts: list[int]) -> None:
    assert_split_back(payloads, cuts, 40)


def assert_split_back(payloads: list[bytes], cuts: list[int], max_frame_bytes: int) -> None:
    """``payloads`` framed, fed in the pieces ``cuts`` makes, come out whole and in order."""
    data = framed(*payloads)
    bounds = sorted({0, len(data), *(c for c in cuts if c < len(data))})
    splitter = FrameSplitter(max_frame_bytes)
    out = []
    for start, end in itertools.pairwise(bounds):
        out += feed(splitter, data[start:end])
    assert out == payloads
    assert splitter.buffered == 0
    assert splitter.error is None


def test_a_size_over_the_limit_ends_the_stream_after_the_frames_before_it() -> None:
    """Refused at its size, before any of it is buffered (a client cannot make the broker
    hold more than ``socket.request.max.bytes``); the frames before it are still served."""
    splitter = FrameSplitter(10)
    assert feed(splitter, framed(b"ok") + struct.pack(">i", 11) + b"x") == [b"ok"]
    assert isinstance(splitter.error, FrameSizeError)
    assert str(splitter.error) == "frame of 11 bytes exceeds socket.request.max.bytes (10)"
    assert splitter.buffered == 0
    assert feed(splitter, framed(b"later")) == []  # nothing after it is read


def test_a_negative_size_ends_the_stream() -> None:
    splitter = FrameSplitter(10)
    assert feed(splitter, struct.pack(">i", -1)) == []
    assert splitter.error is not None
    assert splitter.error.size == -1


def test_a_size_over_the_limit_cut_across_reads_is_refused_when_whole() -> None:
    splitter = FrameSplitter(10)
    data = framed(b"ok") + struct.pack(">i", 11) + b"x"
    assert feed(splitter, data[:8]) == [b"ok"]  # and two bytes of the next size
    assert splitter.error is None
    assert feed(splitter, data[8:]) == []
    assert isinstance(splitter.error, FrameSizeError)
    assert splitter.buffered == 0


def test_a_frame_sent_a_byte_at_a_time_is_gathered() -> None:
    """A peer that trickles its frame: each byte lands where the last one ended."""
    splitter = FrameSplitter(1000)
    data = framed(b"x" * 500)
    out = []
    for i in range(len(data)):
        out += feed(splitter, data[i : i + 1])
        assert splitter.buffered == (i + 1) % len(data)
    assert out == [b"x" * 500]


@given(
    sizes=st.lists(st.integers(0, 400_000), min_size=1, max_size=4),
    cuts=st.lists(st.integers(0, 1_600_000), max_size=12),
)
@settings(max_examples=50, deadline=None)
def test_big_and_small_frames_mixed_give_the_same_frames(sizes: list[int], cuts: list[int]) -> None:
    """Frames above and below ``BIG_FRAME_BYTES`` (and the scratch buffer's size): read
    into buffers of their own, and split out of the scratch buffer."""
    payloads = [bytes([n % 251]) * n for n in sizes]
    assert_split_back(payloads, cuts, 400_000)


def test_a_big_frame_is_read_straight_into_a_buffer_of_its_own() -> None:
    """Its first bytes come in the scratch buffer; the next read is offered the rest of
    the frame and no more, and the frame is handed on as that buffer."""
    splitter = FrameSplitter(1 << 20)
    data = framed(b"y" * 200_000) + framed(b"next")
    assert feed(splitter, data[:1000]) == []
    assert splitter.buffered == 1000
    buffer = splitter.buffer()
    assert len(buffer) == 200_004 - 1000
    buffer[:] = data[1000:200_004]
    (frame,) = splitter.received(len(buffer))
    assert isinstance(frame, bytearray)
    assert frame == b"y" * 200_000
    assert splitter.buffered == 0
    assert feed(splitter, data[200_004:]) == [b"next"]


def test_frames_below_the_big_size_come_several_to_a_read() -> None:
    splitter = FrameSplitter(1 << 20)
    batches = [bytes([i]) * 65_536 for i in range(3)]
    buffer = splitter.buffer()
    data = framed(*batches)
    buffer[: len(data)] = data
    assert splitter.received(len(data)) == batches


def test_a_huge_frame_announced_takes_memory_as_its_bytes_come() -> None:
    """A peer that sends the size of a 100 MiB frame and nothing more holds
    ``EAGER_FRAME_BYTES`` of memory, not the frame's size; a frame that big, sent, comes
    out whole."""
    splitter = FrameSplitter(100 << 20)
    assert feed(splitter, struct.pack(">i", 100 << 20)) == []
    with splitter.buffer() as buffer:
        assert len(buffer) == EAGER_FRAME_BYTES
    payload = bytes(range(256)) * (9 * 4096 + 1)  # 9 MiB and a bit: doubled twice
    data = framed(payload) + framed(b"after")
    splitter = FrameSplitter(100 << 20)
    assert feed(splitter, data) == [payload, b"after"]
