"""Who belongs in the ISR: the leader's rules for shrinking and expanding it (pure).

A follower is in sync while it keeps catching up at least once every
``replica.lag.time.max.ms`` (Kafka measures *time* behind, not messages behind, so a burst
of writes does not evict a healthy follower). "Caught up" is judged at each fetch, by
the leader (``Partition.update_follower_fetch``): a follower that has everything the
leader had when it answered the previous fetch counts, even if producers wrote more since.
An out-of-sync follower
rejoins once it has caught up to the high watermark of the leader's current epoch. The
leader only proposes these changes; the controller commits them (AlterPartition), so a
deposed leader cannot rewrite the ISR.
"""

from __future__ import annotations

from collections.abc import Iterable

from kafkalite.replication.partition import ReplicaState


def out_of_sync_replicas(
    isr: Iterable[int],
    followers: dict[int, ReplicaState],
    now_ms: int,
    replica_lag_time_max_ms: int,
) -> list[int]:
    """ISR members (other than the leader) that have not caught up recently enough."""
    return sorted(
        r
        for r in isr
        if r in followers and now_ms - followers[r].last_caught_up_time_ms > replica_lag_time_max_ms
    )


def caught_up_replicas(isr: Iterable[int], followers: dict[int, ReplicaState]) -> list[int]:
    """Followers outside the ISR that may rejoin: at their last fetch they had reached the
    high watermark and the start of the leader's epoch (so what they have was written
    under this leader)."""
    members = set(isr)
    return sorted(
        r for r, state in followers.items() if r not in members and state.reached_high_watermark
    )
