"""Quorum messages survive the trip through kio's wire format, bytes and all."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kio.serial import entity_reader, entity_writer

from kafkalite.network.send_frame import frame_bytes
from kafkalite.protocol.codec import encode_response
from kafkalite.raft import messages as m
from kafkalite.raft.log import Entry
from kafkalite.raft.snapshot import OffsetAndEpoch
from kafkalite.raft.wire import (
    FETCH_VERSION,
    decode,
    encode,
    entries_to_records,
    fetch_response_frame,
    records_to_entries,
)

pytestmark = pytest.mark.unit

ENTRIES = (
    Entry(10, 3, b"leader-change", control=True),
    Entry(11, 3, b"a"),
    Entry(12, 3, b"b"),
    Entry(13, 4, b"c"),
)

MESSAGES: list[m.Message] = [
    m.VoteRequest(5, 2, 4, 99),
    m.VoteResponse(0, -1, 5, True),
    m.BeginQuorumEpochRequest(1, 7),
    m.BeginQuorumEpochResponse(0, 1, 7),
    m.EndQuorumEpochRequest(1, 7, (2, 3)),
    m.EndQuorumEpochResponse(0, 1, 7),
    m.FetchRequest(2, 7, 120, 6, 0, 100),
    m.FetchResponse(0, 1, 7, 110, 0, None, None, ENTRIES),
    m.FetchResponse(0, 1, 7, 110, 0, m.EpochEndOffset(5, 90), None, ()),
    m.FetchResponse(0, 1, 7, 110, 50, None, OffsetAndEpoch(50, 4), ()),
    m.FetchSnapshotRequest(3, 7, OffsetAndEpoch(50, 4), 4096, 1024),
    m.FetchSnapshotResponse(0, 1, 7, OffsetAndEpoch(50, 4), 9000, 4096, b"chunk"),
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda msg: type(msg).__name__)
def test_round_trip_through_bytes(message: m.Message) -> None:
    entity = encode(message, cluster_id="lab")
    out = io.BytesIO()
    entity_writer(type(entity))(out, entity)
    parsed, size = entity_reader(type(entity))(out.getvalue(), 0)
    assert size == len(out.getvalue())
    assert decode(parsed) == message


def test_entries_become_batches_per_epoch_and_kind() -> None:
    data = entries_to_records(ENTRIES)
    assert records_to_entries(data) == ENTRIES
    assert records_to_entries(b"") == ()


i32 = st.integers(-(2**31), 2**31 - 1)
i64 = st.integers(-(2**63), 2**63 - 1)


@st.composite
def entries(draw: st.DrawFn) -> tuple[Entry, ...]:
    """Consecutive entries from a random offset, epochs never going down."""
    offset = draw(st.integers(0, 2**40))
    epoch = draw(st.integers(0, 2**20))
    out = []
    for payload, control, epoch_step in draw(
        st.lists(st.tuples(st.binary(max_size=40), st.booleans(), st.integers(0, 2)), max_size=6)
    ):
        epoch += epoch_step
        out.append(Entry(offset, epoch, payload, control))
        offset += 1
    return tuple(out)


fetch_responses = st.builds(
    m.FetchResponse,
    error_code=st.sampled_from([0, 6, 74, 75, 91]),
    leader_id=i32,
    leader_epoch=i32,
    high_watermark=i64,
    log_start_offset=i64,
    diverging_epoch=st.none() | st.builds(m.EpochEndOffset, st.integers(0, 2**31 - 1), i64),
    snapshot_id=st.none() | st.builds(OffsetAndEpoch, st.integers(0, 2**63 - 1), i32),
    records=entries(),
)


@given(message=fetch_responses, correlation_id=i32)
@settings(max_examples=300, deadline=None)
def test_a_fetch_response_by_hand_is_kios_frame(
    message: m.FetchResponse, correlation_id: int
) -> None:
    """The quorum leader's hand-encoded Fetch response: exactly the frame kio writes for
    ``encode``'s objects."""
    expected = encode_response(1, FETCH_VERSION, correlation_id, encode(message, "cluster"))
    assert frame_bytes(fetch_response_frame(message, correlation_id)) == expected
