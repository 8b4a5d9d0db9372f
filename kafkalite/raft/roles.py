"""One class per role, as Kafka's ``raft`` package has (``UnattachedState``,
``FollowerState``, ``CandidateState``, ``LeaderState``, ``ResignedState``).

A role holds only what is true while the node is in it (its epoch, its timers, votes
collected, replicas' progress); ``RaftNode`` moves between roles and is the only writer.
Deadlines are absolute milliseconds of the injected clock.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from kafkalite.raft.messages import FetchRequest
from kafkalite.raft.quorum_state import NO_ID
from kafkalite.raft.snapshot import OffsetAndEpoch


class Role(enum.Enum):
    UNATTACHED = "unattached"
    PROSPECTIVE = "prospective"
    FOLLOWER = "follower"
    CANDIDATE = "candidate"
    LEADER = "leader"
    RESIGNED = "resigned"


@dataclass
class UnattachedState:
    """Knows the epoch but no leader; may have voted (``voted_id``) in this epoch."""

    epoch: int
    election_deadline_ms: int
    voted_id: int = NO_ID
    role: Role = Role.UNATTACHED


@dataclass
class SnapshotFetch:
    """A snapshot being pulled chunk by chunk with FetchSnapshot."""

    snapshot_id: OffsetAndEpoch
    data: bytearray = field(default_factory=bytearray)


@dataclass
class FollowerState:
    """Follows ``leader_id``: pulls with Fetch, stands for election when the leader is silent
    for ``fetch.timeout.ms``. At most one Fetch/FetchSnapshot is in flight."""

    epoch: int
    leader_id: int
    fetch_deadline_ms: int
    in_flight_correlation_id: int | None = None
    in_flight_sent_ms: int = 0
    snapshot_fetch: SnapshotFetch | None = None
    voted_id: int = NO_ID
    has_fetched: bool = False
    """A fetch from this leader succeeded in this state: only then may the follower refuse
    a pre-vote because it has a leader (else two followers of a dead leader could keep
    sending each other back to it)."""
    leader_gone: bool = False
    """Nothing listens at the leader's address any more (its connection was refused or
    reset): its process is gone, not slow, so this follower does not wait out
    ``fetch.timeout.ms`` and no longer counts the leader as live when asked for a pre-vote.
    A successful Fetch from it clears this."""
    role: Role = Role.FOLLOWER


@dataclass
class ProspectiveState:
    """Asks for pre-votes for ``epoch + 1`` without changing its own epoch (KIP-996).

    Only a majority of pre-votes lets it stand for real. A voter that could not win (it is
    cut off, or its log is behind) therefore never bumps the epoch, so when it comes back
    it does not force a healthy quorum into a new election. ``vote_cids`` are the
    correlation ids of its pre-vote requests: only their answers count.
    """

    epoch: int
    election_deadline_ms: int
    voted_id: int = NO_ID
    granted: set[int] = field(default_factory=set)
    rejected: set[int] = field(default_factory=set)
    vote_sent_ms: dict[int, int] = field(default_factory=dict)
    vote_cids: dict[int, int] = field(default_factory=dict)
    role: Role = Role.PROSPECTIVE


@dataclass
class CandidateState:
    """Voted for itself in ``epoch`` and asks the other voters; ``vote_sent_ms`` times
    resends to voters that have not answered."""

    epoch: int
    election_deadline_ms: int
    granted: set[int] = field(default_factory=set)
    rejected: set[int] = field(default_factory=set)
    vote_sent_ms: dict[int, int] = field(default_factory=dict)
    vote_cids: dict[int, int] = field(default_factory=dict)
    role: Role = Role.CANDIDATE


@dataclass
class VoterProgress:
    """The leader's view of one voter, as DescribeQuorum reports it (its ``ReplicaState``)."""

    replica_id: int
    log_end_offset: int = -1
    last_fetch_timestamp: int = -1
    last_caught_up_timestamp: int = -1


@dataclass
class ParkedFetch:
    """A Fetch with nothing new to return, answered on new data or at ``deadline_ms``."""

    source: int
    correlation_id: int
    request: FetchRequest
    deadline_ms: int


@dataclass
class LeaderState:
    """Leads ``epoch`` from ``epoch_start_offset`` (where its LeaderChange entry is).

    The high watermark moves only to an offset a majority of voters has flushed *and* above
    ``epoch_start_offset``: an entry of an earlier epoch is committed only indirectly, by an
    entry of this epoch (Raft §5.4.2; Kafka's ``LeaderState.maybeUpdateHighWatermark``).
    """

    epoch: int
    epoch_start_offset: int
    replicas: dict[int, VoterProgress]
    check_quorum_deadline_ms: int
    begin_sent_ms: dict[int, int] = field(default_factory=dict)
    parked: dict[int, ParkedFetch] = field(default_factory=dict)
    high_watermark_sent: dict[int, int] = field(default_factory=dict)
    """The high watermark each voter last got in a Fetch response: a voter that has not
    heard of the current one is answered at once, not parked (Kafka, KIP-1166)."""
    role: Role = Role.LEADER

    def update_replica(self, replica_id: int, end_offset: int, now_ms: int, leo: int) -> None:
        replica = self.replicas.get(replica_id)
        if replica is None:
            return
        replica.log_end_offset = end_offset
        replica.last_fetch_timestamp = now_ms
        if end_offset >= leo:
            replica.last_caught_up_timestamp = now_ms

    def majority_end_offset(self) -> int:
        """The largest offset that a majority of voters has reached."""
        offsets = sorted((r.log_end_offset for r in self.replicas.values()), reverse=True)
        return offsets[len(offsets) // 2]

    def maybe_update_high_watermark(self, current: int) -> int | None:
        """The new high watermark, or None if it does not move."""
        candidate = self.majority_end_offset()
        if candidate > self.epoch_start_offset and candidate > current:
            return candidate
        return None

    def fetched_recently(self, since_ms: int) -> int:
        """How many voters (the leader included) fetched at or after ``since_ms``."""
        return sum(1 for r in self.replicas.values() if r.last_fetch_timestamp >= since_ms)


@dataclass
class ResignedState:
    """Was leader of ``epoch`` and stepped down (shutdown, check-quorum or restart): it
    never leads this epoch again, tells the voters with EndQuorumEpoch, and stands for a
    new epoch when its election timer fires."""

    epoch: int
    election_deadline_ms: int
    preferred_successors: tuple[int, ...] = ()
    end_sent_ms: dict[int, int] = field(default_factory=dict)
    acked: set[int] = field(default_factory=set)
    role: Role = Role.RESIGNED


State = (
    UnattachedState
    | ProspectiveState
    | FollowerState
    | CandidateState
    | LeaderState
    | ResignedState
)
