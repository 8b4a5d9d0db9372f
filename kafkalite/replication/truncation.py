"""Where a follower must cut its log before fetching from a new leader (pure).

A replica that led, or followed an older leader, may hold records the new leader never
had: written by an old leader under an old epoch and never committed. Kafka's follower asks
the leader, with OffsetForLeaderEpoch, where its own latest epoch ended on the leader, and
truncates there (KIP-101/KIP-279), instead of trusting its high watermark, which can be
stale and would lose or keep the wrong records. That is the moment the reliability lecture
is about: the old leader's uncommitted tail disappears.
"""

from __future__ import annotations

from collections.abc import Callable

UNDEFINED_EPOCH = -1


def truncation_offset(
    requested_epoch: int,
    leader_epoch: int,
    leader_end_offset: int,
    local_log_end_offset: int,
    local_end_offset_for: Callable[[int], int],
    local_high_watermark: int,
) -> int:
    """The offset to truncate the follower's log to (no-op if >= its log end offset).

    ``requested_epoch`` is the follower's latest epoch; the leader answered with
    ``(leader_epoch, leader_end_offset)``: the largest epoch it knows that is <= the one
    asked, and where that epoch ends in its log. When the leader has no answer (no epoch
    that old), fall back to the high watermark, which is known committed.
    """
    if leader_epoch == UNDEFINED_EPOCH or leader_end_offset < 0:
        return min(local_high_watermark, local_log_end_offset)
    if leader_epoch == requested_epoch:
        return min(leader_end_offset, local_log_end_offset)
    # The leader never had our latest epoch: cut back to where *its* epoch ended, on
    # whichever side ended it first.
    return min(leader_end_offset, local_end_offset_for(leader_epoch), local_log_end_offset)
