"""Metadata never names a partition leader it does not list among the brokers.

Seen before the fix: a broker left a quorum leader it could no longer reach out of the
broker list but still named it as the leader of its partitions; kafka-python's producer
then raised UnknownBrokerIdError in its I/O thread for every batch, never refreshed its
metadata, and timed out (`test_killing_the_leader_loses_no_acknowledged_write`, 2 in 4).
"""

from __future__ import annotations

import pytest

from kafkalite.broker.data_plane.handlers.metadata import partition_fields
from kafkalite.metadata.image import PartitionRegistration
from kafkalite.protocol.errors import ErrorCode

pytestmark = pytest.mark.unit

LED_BY_1 = PartitionRegistration(
    replicas=(1, 2, 3), isr=(1, 2, 3), leader=1, leader_epoch=4, partition_epoch=7
)


def test_a_listed_leader_is_named() -> None:
    fields = partition_fields({1, 2, 3}, 0, LED_BY_1)
    assert (fields["error_code"], fields["leader_id"]) == (ErrorCode.none, 1)
    assert fields["offline_replicas"] == ()


def test_a_leader_left_out_of_the_broker_list_is_leader_not_available() -> None:
    fields = partition_fields({2, 3}, 0, LED_BY_1)
    assert (fields["error_code"], fields["leader_id"]) == (ErrorCode.leader_not_available, -1)
    assert fields["leader_epoch"] == 4
    assert fields["offline_replicas"] == (1,)
