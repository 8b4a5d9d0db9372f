"""The hand-written Fetch response encoder writes exactly kio's bytes, for random responses
of every version the broker serves, whether the records are bytes or file slices."""

from __future__ import annotations

import datetime
import io
import os
import tempfile
import uuid
from collections.abc import Iterator, Sized
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kio.index import load_response_schema
from kio.schema.errors import ErrorCode
from kio.schema.response_header.v0.header import ResponseHeader as ResponseHeaderV0
from kio.schema.response_header.v1.header import ResponseHeader as ResponseHeaderV1
from kio.serial import entity_writer

from kafkalite.network.send_frame import frame_bytes
from kafkalite.protocol.fetch_response import (
    FLEXIBLE_VERSION,
    MAX_VERSION,
    MIN_VERSION,
    NONE,
    PartitionTags,
    encode_fetch_response,
)
from kafkalite.storage.file_records import FileRecords

pytestmark = pytest.mark.unit

FETCH = 1


@dataclass(frozen=True)
class Aborted:
    producer_id: int
    first_offset: int


@dataclass(frozen=True)
class Answer:
    error: int
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int
    records: Sized
    aborted_transactions: tuple[Aborted, ...] | None


i64 = st.integers(-(2**63), 2**63 - 1)
i32 = st.integers(-(2**31), 2**31 - 1)
answers = st.builds(
    Answer,
    error=st.sampled_from([0, 1, 3, 6, 74, 100]),
    high_watermark=i64,
    last_stable_offset=i64,
    log_start_offset=i64,
    records=st.binary(max_size=300),
    aborted_transactions=st.none() | st.lists(st.builds(Aborted, i64, i64), max_size=3).map(tuple),
)
topics = st.lists(
    st.tuples(
        st.text(min_size=1, max_size=20),
        st.uuids(),
        st.lists(st.tuples(i32, answers), max_size=4),
    ),
    max_size=3,
)


def kio_bytes(
    version: int,
    correlation_id: int,
    topics: list[Any],
    head: tuple[int, ...],
    tags: PartitionTags | None = None,
) -> bytes:
    """The same response built from kio's classes and written by kio's writers."""
    cls = load_response_schema(FETCH, version)
    module = __import__(cls.__module__, fromlist=["x"])
    tagged = {}
    if tags is not None:
        tagged = {
            "diverging_epoch": module.EpochEndOffset(
                epoch=tags.diverging_epoch[0], end_offset=tags.diverging_epoch[1]
            ),
            "current_leader": module.LeaderIdAndEpoch(
                leader_id=tags.current_leader[0], leader_epoch=tags.current_leader[1]
            ),
            "snapshot_id": module.SnapshotId(
                end_offset=tags.snapshot_id[0], epoch=tags.snapshot_id[1]
            ),
        }
    fields = set(cls.__dataclass_fields__)
    throttle, error, session = head
    values: dict[str, Any] = {"throttle_time": datetime.timedelta(milliseconds=throttle)}
    if "error_code" in fields:
        values |= {"error_code": ErrorCode(error), "session_id": session}
    values["responses"] = tuple(
        module.FetchableTopicResponse(
            **({"topic_id": topic_id} if version >= 13 else {"topic": name}),
            partitions=tuple(
                module.PartitionData(
                    partition_index=index,
                    error_code=ErrorCode(a.error),
                    high_watermark=a.high_watermark,
                    last_stable_offset=a.last_stable_offset,
                    **({"log_start_offset": a.log_start_offset} if version >= 5 else {}),
                    aborted_transactions=None
                    if a.aborted_transactions is None
                    else tuple(
                        module.AbortedTransaction(
                            producer_id=t.producer_id, first_offset=t.first_offset
                        )
                        for t in a.aborted_transactions
                    ),
                    **({"preferred_read_replica": -1} if version >= 11 else {}),
                    records=bytes(a.records),
                    **tagged,
                )
                for index, a in partitions
            ),
        )
        for name, topic_id, partitions in topics
    )
    out = io.BytesIO()
    header = ResponseHeaderV1 if cls.__flexible__ else ResponseHeaderV0
    entity_writer(header)(out, header(correlation_id=correlation_id))
    entity_writer(cls)(out, cls(**values))
    body = out.getvalue()
    return len(body).to_bytes(4, "big") + body


@given(
    version=st.integers(MIN_VERSION, MAX_VERSION),
    correlation_id=i32,
    topics=topics,
    throttle=st.integers(0, 2**31 - 1),
    error=st.sampled_from([0, 1, 70]),
    session=i32,
)
@settings(max_examples=400, deadline=None)
def test_records_as_bytes_encode_as_kio_does(
    version: int, correlation_id: int, topics: list[Any], throttle: int, error: int, session: int
) -> None:
    expected = kio_bytes(version, correlation_id, topics, (throttle, error, session))
    parts = encode_fetch_response(
        version,
        correlation_id,
        topics,
        throttle_time_ms=throttle,
        error_code=error,
        session_id=session,
    )
    assert parts == [expected]


def pairs(first: st.SearchStrategy[int], second: st.SearchStrategy[int]) -> Any:
    """A tagged field's two values, often Kafka's default (not written)."""
    return st.just(NONE) | st.tuples(first, second)


@given(
    version=st.integers(FLEXIBLE_VERSION, MAX_VERSION),
    correlation_id=i32,
    topics=topics,
    tags=st.builds(
        PartitionTags,
        diverging_epoch=pairs(i32, i64),
        current_leader=pairs(i32, i32),
        snapshot_id=pairs(i64, i32),
    ),
)
@settings(max_examples=300, deadline=None)
def test_partition_tags_encode_as_kio_does(
    version: int, correlation_id: int, topics: list[Any], tags: PartitionTags
) -> None:
    """The metadata quorum's Fetch: each partition's diverging epoch, current leader and
    snapshot id as tagged fields, in every flexible version."""
    expected = kio_bytes(version, correlation_id, topics, (0, 0, 0), tags)
    parts = encode_fetch_response(version, correlation_id, topics, partition_tags=tags)
    assert parts == [expected]


def test_versions_before_tags_refuse_them() -> None:
    with pytest.raises(ValueError, match="no tagged fields"):
        encode_fetch_response(11, 1, [], partition_tags=PartitionTags(current_leader=(1, 2)))


@pytest.fixture(scope="module")
def segment_file() -> Iterator[int]:
    """A file the file slices of the next test point into."""
    with tempfile.TemporaryFile() as file:
        yield file.fileno()


@given(version=st.integers(MIN_VERSION, MAX_VERSION), topics=topics)
@settings(max_examples=200, deadline=None)
def test_records_as_file_slices_are_spliced_in_place(
    segment_file: int, version: int, topics: list[Any]
) -> None:
    """Each partition's records as a slice of a file: the parts, slices read, are kio's
    bytes, and every slice is a part of its own (never copied into the framing)."""
    sliced = []
    slices = []
    for name, topic_id, partitions in topics:
        answers = []
        for index, a in partitions:
            records: Sized = a.records
            if a.records:
                position = os.lseek(segment_file, 0, os.SEEK_END)
                os.write(segment_file, bytes(a.records))
                records = FileRecords(os.dup(segment_file), position, len(a.records))
                slices.append(records)
            answers.append((index, Answer(**{**a.__dict__, "records": records})))
        sliced.append((name, topic_id, answers))
    parts = encode_fetch_response(version, 7, sliced)
    assert [p for p in parts if isinstance(p, FileRecords)] == slices
    assert frame_bytes(parts) == kio_bytes(version, 7, topics, (0, 0, 0))


def test_unknown_topic_ids_are_zero_uuids_before_v13_names() -> None:
    """A v13+ topic is named by id alone; before, by name alone (the id is not written)."""
    answer = Answer(0, 5, 5, 0, b"", ())
    topic_id = uuid.uuid4()
    v12 = encode_fetch_response(12, 1, [("t", topic_id, [(0, answer)])])
    v13 = encode_fetch_response(13, 1, [("t", topic_id, [(0, answer)])])
    assert topic_id.bytes not in bytes(v12[0])  # type: ignore[arg-type]
    assert topic_id.bytes in bytes(v13[0])  # type: ignore[arg-type]
