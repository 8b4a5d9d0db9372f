"""Who belongs in the ISR: the leader's rules for shrinking and expanding it (pure).

A follower is in sync while it keeps catching up at least once every
``replica.lag.time.max.ms`` (Kafka measures *time* behind, not messages behind, so a burst
of writes does not evict a healthy follower). "Caught up" is judged at each fetch, by
the leader (``Partition.update_follower_fetch``): a follower that has everything the
leader had when it answered the previous fetch counts, even if producers wrote more since.
An out-of-sync follower
rejoins once it has caught up to the high watermark of the leader's current epoch, and
recently enough that the first rule would keep it. The
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
        r for r in isr if r in followers and _lagging(followers[r], now_ms, replica_lag_time_max_ms)
    )


def caught_up_replicas(
    isr: Iterable[int],
    followers: dict[int, ReplicaState],
    high_watermark: int,
    now_ms: int,
    replica_lag_time_max_ms: int,
) -> list[int]:
    """Followers outside the ISR that may rejoin: at their last fetch they had reached the
    high watermark and the start of the leader's epoch (so what they have was written
    under this leader), they still hold every record below the high watermark *now*, and
    they caught up recently enough to stay. Kafka expands the ISR only when a fetch
    arrives, and from then on its HW waits for the joiner; these rules are checked on a
    timer, so the HW may have passed a joiner's last fetch since: proposed anyway, it
    would join the ISR without committed records it could then lose by being elected.
    Without the recency condition a slow follower whose last fetch reached the high
    watermark would be added back at every check and dropped again at the next one (seen
    every 100 ms, for seconds, in lab 02 after ``slow(3, 3000)``)."""
    members = set(isr)
    return sorted(
        r
        for r, state in followers.items()
        if r not in members
        and state.reached_high_watermark
        and state.log_end_offset >= high_watermark
        and not _lagging(state, now_ms, replica_lag_time_max_ms)
    )


def _lagging(follower: ReplicaState, now_ms: int, replica_lag_time_max_ms: int) -> bool:
    return now_ms - follower.last_caught_up_time_ms > replica_lag_time_max_ms
