"""What a leader learns from a follower's Fetch while it holds it (nothing new to send,
``replica.fetch.wait.max.ms``): the follower is caught up all the while it waits at the log
end, and a move of the high watermark answers the Fetch at once so the follower learns it."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalite.replication.isr import out_of_sync_replicas
from tests.unit.replication.test_partition_and_isr import leader, produce

pytestmark = pytest.mark.unit

LAG_MAX_MS = 1000  # replica.lag.time.max.ms
WAIT_MS = 500  # replica.fetch.wait.max.ms


def test_a_follower_waiting_at_the_log_end_stays_in_sync(tmp_path: Path) -> None:
    p = leader(tmp_path)
    produce(p, 3)
    p.update_follower_fetch(2, 3, now_ms=0, max_wait_ms=WAIT_MS)  # held: nothing new
    p.update_follower_fetch(3, 3, now_ms=0, max_wait_ms=WAIT_MS)
    p.follower_answered(3)  # broker 3's answer went out; its next Fetch is late
    p.credit_waiting_followers(now_ms=400)
    assert out_of_sync_replicas([2, 3], p.followers, 1100, LAG_MAX_MS) == [3]


def test_a_held_fetch_counts_only_until_its_wait_ends(tmp_path: Path) -> None:
    p = leader(tmp_path)
    produce(p, 3)
    p.update_follower_fetch(2, 3, now_ms=0, max_wait_ms=WAIT_MS)
    p.credit_waiting_followers(now_ms=WAIT_MS + 1)  # answered by then, even if not seen here
    assert out_of_sync_replicas([2], p.followers, 1100, LAG_MAX_MS) == [2]


def test_a_follower_waiting_behind_the_log_end_is_not_credited(tmp_path: Path) -> None:
    p = leader(tmp_path)
    produce(p, 3)
    p.update_follower_fetch(2, 3, now_ms=0, max_wait_ms=WAIT_MS)
    produce(p, 1)  # (its held Fetch is answered with this record)
    p.credit_waiting_followers(now_ms=400)
    assert p.followers[2].last_caught_up_time_ms == 0


def test_a_moved_high_watermark_is_news_for_a_follower_until_it_is_answered(
    tmp_path: Path,
) -> None:
    p = leader(tmp_path)
    produce(p, 3)
    p.update_follower_fetch(2, 3, now_ms=0, max_wait_ms=WAIT_MS)
    p.follower_answered(2)  # told HW 0 (broker 3 has nothing yet)
    assert not p.follower_lacks_high_watermark(2)
    p.update_follower_fetch(2, 3, now_ms=5, max_wait_ms=WAIT_MS)  # held, at the log end
    assert not p.follower_lacks_high_watermark(2)
    assert p.update_follower_fetch(3, 3, now_ms=6, max_wait_ms=WAIT_MS)  # HW 0 -> 3
    assert p.follower_lacks_high_watermark(2) and p.follower_lacks_high_watermark(3)
    p.follower_answered(2)
    assert not p.follower_lacks_high_watermark(2)


def test_a_fetch_abandoned_unanswered_stops_counting(tmp_path: Path) -> None:
    """Its connection closed (the follower died, or dropped it for a new partition): the
    follower no longer waits there, and leaves the ISR after ``replica.lag.time.max.ms``,
    not after the rest of a long ``max_wait``."""
    p = leader(tmp_path)
    produce(p, 3)
    p.update_follower_fetch(2, 3, now_ms=0, max_wait_ms=10_000)
    p.follower_fetch_abandoned(2, held_until_ms=10_000)
    p.credit_waiting_followers(now_ms=900)
    assert out_of_sync_replicas([2], p.followers, 1100, LAG_MAX_MS) == [2]


def test_an_abandoned_fetch_leaves_the_followers_newer_one_counting(tmp_path: Path) -> None:
    """The follower dropped its held Fetch for a new one on a new connection, which the
    leader saw first: the old one's end must not end the new one's wait."""
    p = leader(tmp_path)
    produce(p, 3)
    p.update_follower_fetch(2, 3, now_ms=0, max_wait_ms=10_000)
    p.update_follower_fetch(2, 3, now_ms=5, max_wait_ms=10_000)  # the new connection's
    p.follower_fetch_abandoned(2, held_until_ms=10_000)  # the old one, cancelled
    p.credit_waiting_followers(now_ms=900)
    assert out_of_sync_replicas([2], p.followers, 1100, LAG_MAX_MS) == []
