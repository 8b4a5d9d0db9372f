"""Record batch v2 header access, checked against batches built by kafka-python's own encoder."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from kafkalite.protocol.record_batch import (
    InvalidBatchError,
    MoreThanOneBatchError,
    iter_batches,
    parse_header,
    stamp,
    validate_batch,
    validate_produced,
)
from kafkalite.protocol.records import Record, build_batch, decode_records

pytestmark = pytest.mark.unit


def kafka_python_batch(
    values: list[bytes], producer_id: int = -1, base_sequence: int = -1
) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=False,
        producer_id=producer_id,
        producer_epoch=0 if producer_id >= 0 else -1,
        base_sequence=base_sequence,
        batch_size=1 << 20,
    )
    for i, value in enumerate(values):
        builder.append(i, timestamp=1_700_000_000_000 + i, key=None, value=value, headers=[])
    return bytes(builder.build())


def test_header_of_a_real_client_batch() -> None:
    batch = kafka_python_batch([b"a", b"bb", b"ccc"], producer_id=42, base_sequence=7)
    header = validate_batch(batch)
    assert header.records_count == 3
    assert header.last_offset_delta == 2
    assert header.producer_id == 42
    assert header.base_sequence == 7
    assert header.last_sequence == 9
    assert header.size_in_bytes == len(batch)
    assert header.base_timestamp == 1_700_000_000_000
    assert header.max_timestamp == 1_700_000_000_002


def test_our_encoder_matches_kafka_pythons_decoder() -> None:
    batch = build_batch(
        [Record(b"k", b"v", 5, (("h", b"1"),)), Record(None, None, 9)], base_offset=10
    )
    decoded = list(DefaultRecordBatch(batch))
    assert [(r.offset, r.key, r.value, r.timestamp) for r in decoded] == [
        (10, b"k", b"v", 5),
        (11, None, None, 9),
    ]
    assert decoded[0].headers == [("h", b"1")]


def test_stamping_keeps_the_crc_valid() -> None:
    batch = bytearray(kafka_python_batch([b"x"] * 5))
    stamp(batch, 0, base_offset=1000, partition_leader_epoch=3)
    header = validate_batch(bytes(batch))
    assert header.base_offset == 1000
    assert header.partition_leader_epoch == 3
    assert header.last_offset == 1004


def test_corrupt_crc_is_rejected() -> None:
    batch = bytearray(kafka_python_batch([b"payload"]))
    batch[-1] ^= 0xFF
    with pytest.raises(InvalidBatchError, match="CRC"):
        validate_batch(bytes(batch))


def test_truncated_batch_is_rejected() -> None:
    batch = kafka_python_batch([b"payload" * 10])
    with pytest.raises(InvalidBatchError):
        validate_produced(batch[:-3])


def test_a_produced_partition_carries_exactly_one_batch() -> None:
    """Kafka's ProduceRequest v3+ rule, checked before the batches' contents."""
    a = kafka_python_batch([b"1", b"2"])
    b = bytearray(kafka_python_batch([b"3"]))
    assert validate_produced(a).records_count == 2
    with pytest.raises(MoreThanOneBatchError):
        validate_produced(a + bytes(b))
    b[-1] ^= 0xFF  # corrupt the second: still "more than one batch"
    with pytest.raises(MoreThanOneBatchError):
        validate_produced(a + bytes(b))


def test_iter_batches_stops_at_a_partial_tail() -> None:
    a = kafka_python_batch([b"1", b"2"])
    b = kafka_python_batch([b"3"])
    assert len(list(iter_batches(a + b[:20]))) == 1


def test_wrong_magic_is_rejected() -> None:
    batch = bytearray(kafka_python_batch([b"x"]))
    batch[16] = 1
    with pytest.raises(InvalidBatchError, match="magic"):
        parse_header(bytes(batch))


@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.binary(max_size=50)),
            st.one_of(st.none(), st.binary(max_size=200)),
        ),
        min_size=1,
        max_size=20,
    )
)
def test_records_round_trip(pairs: list[tuple[bytes | None, bytes | None]]) -> None:
    records = [Record(k, v, 1000 + i) for i, (k, v) in enumerate(pairs)]
    batch = build_batch(records, base_offset=50)
    validate_batch(batch)
    decoded = decode_records(batch)
    assert [(r.key, r.value, r.timestamp, r.offset) for r in decoded] == [
        (k, v, 1000 + i, 50 + i) for i, (k, v) in enumerate(pairs)
    ]


@given(st.binary(max_size=200))
def test_garbage_never_validates_silently(data: bytes) -> None:
    try:
        header = validate_produced(data)
    except InvalidBatchError:
        return
    assert header.size_in_bytes == len(data)
