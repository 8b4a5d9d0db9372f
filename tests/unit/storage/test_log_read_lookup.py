"""A read finds its batches with the sparse index and a few headers (never reading the
batches in between), and returns what a scan of every batch header would: for random
logs (batches of random sizes over several segments, index entries every few hundred
bytes) and random reads. The file slice a Fetch sends holds the same bytes, and the
offset after its last batch is where the aborted-transaction lookup stops."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkalite.protocol.record_batch import iter_batches
from kafkalite.protocol.records import Record, build_batch
from kafkalite.storage.config import LogConfig
from kafkalite.storage.log import Log

pytestmark = pytest.mark.unit


def scanned(log: Log, start: int, max_bytes: int, max_offset: int, min_one: bool) -> bytes:
    """The reference: every batch header of every segment, in order (Kafka-Lite's read
    before the index lookups)."""
    if start >= max_offset:
        return b""
    for segment in log.segments[log.segment_index(start) :]:
        data = segment.read_bytes(0, segment.size)
        taken = b""
        for pos, header in iter_batches(data):
            if header.last_offset < start:
                continue
            if header.base_offset >= max_offset:
                break
            if len(taken) + header.size_in_bytes > max_bytes and not (min_one and not taken):
                break
            taken += data[pos : pos + header.size_in_bytes]
        if taken:
            return taken
    return b""


@given(
    sizes=st.lists(st.integers(1, 40), min_size=1, max_size=40),
    value_bytes=st.integers(1, 300),
    segment_bytes=st.integers(400, 4000),
    reads=st.lists(
        st.tuples(st.integers(0, 400), st.integers(0, 5000), st.integers(0, 400), st.booleans()),
        min_size=1,
        max_size=20,
    ),
)
@settings(max_examples=150, deadline=None)
def test_reads_match_a_scan_of_every_header(
    sizes: list[int],
    value_bytes: int,
    segment_bytes: int,
    reads: list[tuple[int, int, int, bool]],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        config = LogConfig(segment_bytes=segment_bytes, index_interval_bytes=256)
        log = Log.open(Path(tmp) / "t-0", config, lambda: 0)
        for n in sizes:
            log.append_as_leader(
                build_batch([Record(None, b"v" * value_bytes)] * n), leader_epoch=0
            )
        check_reads(log, reads)
        log.close()
        reopened = Log.open(Path(tmp) / "t-0", config, lambda: 0)  # the index read back
        check_reads(reopened, reads)
        for n in sizes[:5]:  # appends after the last entry read back
            reopened.append_as_leader(
                build_batch([Record(None, b"w" * value_bytes)] * n), leader_epoch=1
            )
        check_reads(reopened, reads)
        reopened.close()


def check_reads(log: Log, reads: list[tuple[int, int, int, bool]]) -> None:
    end = log.log_end_offset
    for asked_start, max_bytes, asked_max_offset, min_one in reads:
        start, max_offset = asked_start % (end + 1), asked_max_offset % (end + 2)
        expected = scanned(log, start, max_bytes, max_offset, min_one)
        assert log.read(start, max_bytes, max_offset, min_one).records == expected
        found = log.read_file_records(start, max_bytes, max_offset, min_one)
        records = found.records if isinstance(found.records, bytes) else found.records.read()
        assert records == expected
        batches = list(iter_batches(expected))
        last = batches[-1][1].next_offset if batches else start
        assert found.next_offset >= last
        assert not any(
            start <= h.base_offset < found.next_offset
            for s in log.segments
            for _, h in iter_batches(s.read_bytes(0, s.size))
            if h.base_offset >= last
        )
