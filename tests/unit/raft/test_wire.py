"""Quorum messages survive the trip through kio's wire format, bytes and all."""

from __future__ import annotations

import io

import pytest
from kio.serial import entity_reader, entity_writer

from kafkalite.raft import messages as m
from kafkalite.raft.log import Entry
from kafkalite.raft.snapshot import OffsetAndEpoch
from kafkalite.raft.wire import decode, encode, entries_to_records, records_to_entries

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
