"""A topic's compression.type applied by the leader's log, and timestamp lookups that open
compressed batches (ListOffsets by time and MAX_TIMESTAMP)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalite.protocol.compression import Codec
from kafkalite.protocol.record_batch import iter_batches
from kafkalite.protocol.records import Record, build_batch, decode_records, recompress
from kafkalite.storage.config import LogConfig
from kafkalite.storage.log import Log
from kafkalite.storage.timestamp_lookup import max_timestamp_offset, offset_for_timestamp

pytestmark = pytest.mark.unit


def open_log(path: Path, **configs: str) -> Log:
    return Log.open(path, LogConfig.from_configs(configs), lambda: 1_000_000)


def stored(log: Log) -> list[tuple[int, list[bytes | None]]]:
    """Each stored batch's codec and values."""
    data = log.read(log.log_start_offset, 1 << 20, log.log_end_offset).records
    return [
        (header.compression, [r.value for r in decode_records(data, pos)])
        for pos, header in iter_batches(data)
    ]


def with_timestamps(*timestamps: int, codec: Codec = Codec.NONE) -> bytes:
    batch = build_batch([Record(None, b"%d" % t, t) for t in timestamps])
    return recompress(batch, codec) if codec else batch


@pytest.mark.parametrize("name", ["gzip", "snappy", "lz4", "zstd", "uncompressed"])
def test_the_leader_recompresses_to_the_topics_codec(tmp_path: Path, name: str) -> None:
    log = open_log(tmp_path / "t-0", **{"compression.type": name})
    log.append_as_leader(with_timestamps(1, 2), 0)
    log.append_as_leader(with_timestamps(3, codec=Codec.SNAPPY), 0)
    expected = {"gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4, "uncompressed": 0}[name]
    assert stored(log) == [(expected, [b"1", b"2"]), (expected, [b"3"])]


def test_producer_keeps_each_batch_as_it_came(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0", **{"compression.type": "producer"})
    log.append_as_leader(with_timestamps(1, codec=Codec.LZ4), 0)
    log.append_as_leader(with_timestamps(2), 0)
    assert [codec for codec, _ in stored(log)] == [Codec.LZ4, Codec.NONE]


def test_time_lookups_open_compressed_batches(tmp_path: Path) -> None:
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(with_timestamps(100, 300, 200, codec=Codec.ZSTD), 0)
    log.append_as_leader(with_timestamps(300, 150, codec=Codec.GZIP), 0)
    assert offset_for_timestamp(log, 250) == (1, 300)
    # the first record with the largest timestamp, not its batch's last offset
    assert max_timestamp_offset(log, log.log_end_offset) == (1, 300)
