"""Batch compression as Kafka frames it, checked against the codec libraries kafka-python
uses (python-snappy, lz4, zstandard), not against the code under test."""

from __future__ import annotations

import gzip

import lz4.frame
import pytest
import snappy
import zstandard
from kafka.codec import snappy_decode

from kafkalite.protocol.compression import Codec, compress, decompress
from kafkalite.protocol.record_batch import validate_batch
from kafkalite.protocol.records import Record, build_batch, decode_records, recompress

pytestmark = pytest.mark.unit

DATA = b"".join(b"record %d of a lab; " % i for i in range(5000))
INDEPENDENT = {
    Codec.GZIP: gzip.decompress,
    Codec.SNAPPY: snappy_decode,  # kafka-python's reader of Java's xerial framing
    Codec.LZ4: lz4.frame.decompress,
    Codec.ZSTD: lambda d: zstandard.ZstdDecompressor().decompress(d, max_output_size=1 << 24),
}


@pytest.mark.parametrize("codec", list(INDEPENDENT), ids=lambda c: c.name)
def test_what_we_compress_other_libraries_read(codec: Codec) -> None:
    compressed = compress(codec, DATA)
    assert len(compressed) < len(DATA)
    assert INDEPENDENT[codec](compressed) == DATA
    assert decompress(codec, compressed) == DATA


def test_a_bare_snappy_block_is_read_too() -> None:
    assert decompress(Codec.SNAPPY, snappy.compress(DATA)) == DATA  # librdkafka's way


@pytest.mark.parametrize("codec", list(Codec), ids=lambda c: c.name)
def test_recompressing_keeps_every_record_and_header_field(codec: Codec) -> None:
    records = [Record(b"k%d" % i, b"v" * 50, 1000 + i, (("h", b"x"),)) for i in range(20)]
    original = build_batch(
        records,
        base_offset=7,
        producer_id=42,
        producer_epoch=3,
        base_sequence=11,
        transactional=True,
    )
    converted = recompress(recompress(original, Codec.GZIP), codec)
    header = validate_batch(converted)  # length and CRC are right
    assert header.compression == codec
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (42, 3, 11)
    assert header.is_transactional
    assert (header.base_offset, header.records_count, header.max_timestamp) == (7, 20, 1019)
    assert [r.value for r in decode_records(converted)] == [r.value for r in records]
    assert decode_records(converted) == decode_records(original)
