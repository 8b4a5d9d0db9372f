"""Requests exactly as older clients put them on the wire, answered as Kafka answers them.

librdkafka 2.0 wrote one tagged-field section too many at the end of flexible requests
(fixed in librdkafka 2.1, PR #4207). Kafka reads a request's fields and ignores bytes after
them, so those clients worked against Kafka; a broker that closes the connection instead
leaves the client waiting for its request timeout. The frames below were captured from
confluent-kafka 2.0.2 (``list_consumer_groups`` and ``list_consumer_group_offsets``).
"""

from __future__ import annotations

import pytest
from kio.schema.find_coordinator.v3.request import FindCoordinatorRequest
from kio.schema.list_groups.v4.request import ListGroupsRequest
from kio.schema.offset_fetch.v7.request import OffsetFetchRequest

from tests.support.raw import RawConnection
from tests.support.waiting import wait_for

pytestmark = pytest.mark.interop

# ListGroups v4: header v2 (client "rdkafka"), states_filter = [], tags, and one extra 0.
LIST_GROUPS_V4_LIBRDKAFKA_2_0 = bytes.fromhex("0010000400000003000772646b61666b6100010000")
# OffsetFetch v7 for group "gp", topics = null (every committed offset), then extra bytes.
OFFSET_FETCH_V7_LIBRDKAFKA_2_0 = bytes.fromhex(
    "0009000700000007000772646b61666b6100036770000000000000"
)


def _send(conn: RawConnection, frame: bytes) -> bytes:
    conn.send_bytes(len(frame).to_bytes(4, "big") + frame)
    return conn.read_frame()


def test_list_groups_v4_from_librdkafka_2_0_is_answered(bootstrap: str) -> None:
    with RawConnection(bootstrap) as conn:
        frame = _send(conn, LIST_GROUPS_V4_LIBRDKAFKA_2_0)
        correlation_id, response = conn.decode(frame, ListGroupsRequest)
    assert correlation_id == 3
    assert response.error_code == 0


def test_offset_fetch_v7_all_topics_from_librdkafka_2_0_is_answered(bootstrap: str) -> None:
    def answer() -> tuple[int, object] | None:
        with RawConnection(bootstrap) as conn:
            conn.request(FindCoordinatorRequest(key="gp", key_type=0))
            correlation_id, response = conn.decode(
                _send(conn, OFFSET_FETCH_V7_LIBRDKAFKA_2_0), OffsetFetchRequest
            )
        # FindCoordinator creates __consumer_offsets; NOT_COORDINATOR until it is there
        return (correlation_id, response) if response.error_code == 0 else None

    correlation_id, response = wait_for(answer, what="OffsetFetch answered by the coordinator")
    assert correlation_id == 7
    assert response.topics == ()  # group "gp" has committed nothing on this cluster
