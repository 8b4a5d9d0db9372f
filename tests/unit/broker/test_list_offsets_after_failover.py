"""ListOffsets on a new leader whose high watermark still lags its epoch's start.

Kafka's ``Partition.fetchOffsetForTimestamp``: "latest", and a timestamp lookup that finds
nothing below the readable end, are OFFSET_NOT_AVAILABLE until the HW reaches the offset
the leader's epoch began at; "earliest" is always answered. (The integration test
``test_list_offsets_failover`` shows the client's side.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalite.broker.data_plane.handlers.list_offsets import (
    EARLIEST,
    LATEST,
    MAX_TIMESTAMP,
    _lookup,
)
from kafkalite.protocol.errors import ErrorCode, KafkaError
from kafkalite.protocol.records import Record, build_batch
from kafkalite.replication.partition import READ_UNCOMMITTED, Partition
from kafkalite.storage.config import LogConfig
from kafkalite.storage.log import Log

pytestmark = pytest.mark.unit


def new_leader_with_a_lagging_hw(tmp_path: Path) -> Partition:
    """A follower that had 11 records (the old leader's HW, as it last heard, was 10)
    becomes leader of epoch 1; its other follower has not fetched from it yet."""
    log = Log.open(tmp_path / "t-0", LogConfig(), lambda: 0)
    partition = Partition("t", 0, log, local_broker_id=2)
    partition.make_follower(1, 0, 0, (1, 2, 3), (1, 2, 3))
    partition.append_as_follower(
        build_batch([Record(None, b"%d" % i, 1000 + i) for i in range(11)]),
        leader_high_watermark=10,
    )
    partition.make_leader(1, 1, (1, 2, 3), (2, 3), now_ms=0)
    return partition


def test_latest_is_not_available_until_the_hw_reaches_the_epoch_start(tmp_path: Path) -> None:
    partition = new_leader_with_a_lagging_hw(tmp_path)
    assert (partition.high_watermark, partition.epoch_start_offset) == (10, 11)
    for timestamp in (LATEST, MAX_TIMESTAMP, 1010):  # 1010: the record at offset 10
        with pytest.raises(KafkaError) as lag:
            _lookup(partition, timestamp, READ_UNCOMMITTED)
        assert lag.value.code == ErrorCode.offset_not_available
    assert _lookup(partition, EARLIEST, READ_UNCOMMITTED) == (0, -1)
    assert _lookup(partition, 1003, READ_UNCOMMITTED) == (3, 1003)  # below the HW: found
    partition.update_follower_fetch(3, 11, now_ms=1)  # the other follower catches up
    assert partition.high_watermark == 11
    assert _lookup(partition, LATEST, READ_UNCOMMITTED) == (11, -1)
    assert _lookup(partition, MAX_TIMESTAMP, READ_UNCOMMITTED) == (10, 1010)
