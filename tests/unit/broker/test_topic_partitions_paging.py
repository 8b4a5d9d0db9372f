"""DescribeTopicPartitions' paging: at most ``limit`` partitions a page, resumed by cursor."""

from __future__ import annotations

import pytest

from kafkalite.broker.data_plane.handlers.topic_partitions import paginate

pytestmark = pytest.mark.unit

TOPICS = [("b", [0, 1, 2]), ("a", [0, 1]), ("c", [0])]


def test_pages_cover_every_partition_once_in_topic_order() -> None:
    seen, cursor, pages = [], None, 0
    while True:
        page, cursor = paginate(TOPICS, cursor, 2)
        seen.extend((name, p) for name, parts in page for p in parts)
        pages += 1
        if cursor is None:
            break
    assert seen == [("a", 0), ("a", 1), ("b", 0), ("b", 1), ("b", 2), ("c", 0)]
    assert pages == 3


def test_a_page_ends_inside_a_topic_and_the_cursor_points_at_the_next_partition() -> None:
    page, cursor = paginate(TOPICS, ("b", 1), 1)
    assert (page, cursor) == ([("b", [1])], ("b", 2))


def test_a_topic_without_partitions_still_appears() -> None:
    assert paginate([("missing", [])], None, 10) == ([("missing", [])], None)
