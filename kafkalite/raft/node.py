"""``RaftNode``: Kafka's ``KafkaRaftClient`` without I/O — a deterministic state machine.

The owner (the broker's asyncio task, or the simulation) feeds it time and messages and
sends what it returns; the node never reads a clock, opens a socket or draws randomness
it was not given, so a seeded run replays exactly::

    out = node.poll(now_ms)                  # timers: elections, fetch, resends, flush
    out = node.handle(now_ms, envelope)      # a request or a response from another voter
    result = node.append(now_ms, [payload])  # leader only; committed once HW passes it
    for item in node.take_committed(): ...   # Entry or Snapshot, in order, each once

Call ``poll`` again by ``next_deadline_ms()``. Every state change that Raft's safety needs
on disk (epoch, vote, leader) is written through ``QuorumStateStore`` before a message
that depends on it is returned. Not thread-safe: one task owns a node.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass

from kafkalite.raft import messages as m
from kafkalite.raft.config import RaftConfig
from kafkalite.raft.election import ElectionMixin
from kafkalite.raft.fetching import FetchingMixin
from kafkalite.raft.log import Entry, LogInvariantError, RaftLog
from kafkalite.raft.quorum_state import NO_ID, ElectionState, QuorumStateStore
from kafkalite.raft.roles import (
    CandidateState,
    FollowerState,
    LeaderState,
    ProspectiveState,
    ResignedState,
    Role,
    State,
    UnattachedState,
    VoterProgress,
)
from kafkalite.raft.snapshot import Snapshot


@dataclass(frozen=True, slots=True)
class NotLeader:
    """``append`` on a non-leader: where to go instead (-1 if unknown)."""

    leader_id: int
    leader_epoch: int


@dataclass(frozen=True, slots=True)
class QuorumInfo:
    """What DescribeQuorum reports (only the leader knows the voters' progress)."""

    leader_id: int
    leader_epoch: int
    high_watermark: int
    log_end_offset: int
    current_voters: tuple[VoterProgress, ...]


class RaftNode(ElectionMixin, FetchingMixin):
    """One voter of the metadata quorum. See the module docstring for how to drive it."""

    def __init__(
        self,
        node_id: int,
        voters: Sequence[int],
        store: QuorumStateStore,
        log: RaftLog,
        rng: random.Random,
        config: RaftConfig | None = None,
    ) -> None:
        if node_id not in voters:
            raise ValueError(f"node {node_id} is not a voter of {sorted(voters)}")
        self.node_id = node_id
        self.voters = tuple(sorted(set(voters)))
        self.store = store
        self.log = log
        self.rng = rng
        self.config = config or RaftConfig()
        self._outbox: list[m.Envelope] = []
        self._next_correlation_id = 0
        self._high_watermark = log.log_start_offset
        self._applied = log.log_start_offset
        self._pending_snapshot: Snapshot | None = log.snapshots.latest()
        self._started = False
        self._state: State = UnattachedState(store.read().leader_epoch, 0)

    # ---- what the owner reads ------------------------------------------------------------
    @property
    def high_watermark(self) -> int:
        """Entries below this offset are committed (Kafka's HW is exclusive)."""
        return self._high_watermark

    def describe_quorum(self) -> QuorumInfo | None:
        """DescribeQuorum's partition data; None unless this node leads."""
        if not isinstance(self._state, LeaderState):
            return None
        voters = tuple(VoterProgress(**vars(r)) for r in self._state.replicas.values())
        return QuorumInfo(
            self.node_id, self.epoch, self._high_watermark, self.log.end_offset, voters
        )

    @property
    def follower_progress(self) -> str:
        """How this node follows, in a line for a log (empty unless it follows): whether a
        Fetch is in flight and since when, and the snapshot it is fetching, if any."""
        s = self._state
        if not isinstance(s, FollowerState):
            return ""
        fetch = s.snapshot_fetch
        return (
            f"in flight: {s.in_flight_correlation_id} sent at {s.in_flight_sent_ms} ms, "
            f"fetched from this leader: {s.has_fetched}, snapshot being fetched: "
            + (f"{fetch.snapshot_id} ({len(fetch.data)} bytes)" if fetch else "none")
        )

    @property
    def epoch_start_offset(self) -> int | None:
        """Where this leader's epoch begins (its LeaderChange entry); None unless leading.
        Once the high watermark passes it, every entry of earlier epochs is committed."""
        s = self._state
        return s.epoch_start_offset if isinstance(s, LeaderState) else None

    def in_contact_with_majority(self, now_ms: int) -> bool:
        """Could an append made now commit soon? A leader that a majority (itself included)
        fetched from within ``fetch.timeout.ms``, or a follower that heard from its leader
        within it. Anything else (an election, a cut-off voter) has no quorum to ask."""
        s = self._state
        if isinstance(s, LeaderState):
            since = now_ms - self.config.fetch_timeout_ms
            return s.fetched_recently(since) >= self.majority
        if isinstance(s, FollowerState):
            return s.has_fetched and not s.leader_gone and now_ms < s.fetch_deadline_ms
        return False

    def voter_unreachable(self, now_ms: int, voter_id: int) -> bool:
        """The driver found nothing listening at ``voter_id`` (connection refused or reset,
        which no fault and no busy process causes: the process is gone). If this voter
        follows it, it stands without waiting out ``fetch.timeout.ms``: a killed
        controller is replaced in about a tenth of a second. A paused or cut-off leader
        keeps its connections: only the timeout finds it.

        Every follower of the dead leader finds it gone at about the same moment, so they
        stand in turn, by id, as the preferred successors of a leader that resigns do
        (``_end_epoch_backoff``): the lowest survivor at once, the next half an election
        timeout later, by when it has usually heard of the first one's win. Standing
        after a random jitter alone, two survivors stood together and split the vote one
        time in three under load, which cost another election timeout (0.6 s instead of
        0.1-0.2). True if this changed the node's next deadline."""
        s = self._state
        if not (isinstance(s, FollowerState) and s.leader_id == voter_id and not s.leader_gone):
            return False
        s.leader_gone = True
        turn = self.config.election_timeout_ms // 2
        ahead = sum(1 for v in self.voters if v < self.node_id and v != voter_id)
        delay = ahead * turn + self.rng.randrange(max(1, turn // 4))
        s.fetch_deadline_ms = min(s.fetch_deadline_ms, now_ms + delay)
        return True

    def next_deadline_ms(self) -> int:
        """When ``poll`` next has work (now, if a leader has entries to flush)."""
        s = self._state
        if isinstance(s, LeaderState):
            if self.log.flushed_end_offset < self.log.end_offset:
                return 0
            due = [p.deadline_ms for p in s.parked.values()]
            due += [t + self.config.request_timeout_ms for t in s.begin_sent_ms.values()]
            return min([s.check_quorum_deadline_ms, *due])
        if isinstance(s, FollowerState):
            resend = s.in_flight_sent_ms + (
                self.config.request_timeout_ms if s.in_flight_correlation_id is not None else 0
            )
            return min(s.fetch_deadline_ms, resend)
        if isinstance(s, CandidateState | ProspectiveState):
            votes = [
                t + self.config.request_timeout_ms
                for v, t in s.vote_sent_ms.items()
                if v not in s.granted and v not in s.rejected
            ]
            return min([s.election_deadline_ms, *votes])
        if isinstance(s, ResignedState):
            ends = [
                t + self.config.request_timeout_ms
                for v, t in s.end_sent_ms.items()
                if v not in s.acked
            ]
            return min([s.election_deadline_ms, *ends])
        return s.election_deadline_ms

    def take_committed(self) -> list[Entry | Snapshot]:
        """Committed items not yet taken, in log order. A ``Snapshot`` means "reset the state
        machine to this"; entries with ``control`` set are quorum records to skip."""
        out: list[Entry | Snapshot] = []
        if self._pending_snapshot is not None:
            out.append(self._pending_snapshot)
            self._applied = max(self._applied, self._pending_snapshot.snapshot_id.end_offset)
            self._pending_snapshot = None
        end = min(self._high_watermark, self.log.end_offset)
        if end > self._applied:
            out.extend(self.log.read(self._applied, end - self._applied, end))
            self._applied = end
        return out

    # ---- what the owner calls ------------------------------------------------------------
    def poll(self, now_ms: int) -> list[m.Envelope]:
        """Fire due timers; returns the messages to send."""
        self._maybe_start(now_ms)
        s = self._state
        if isinstance(s, LeaderState):
            self._poll_leader(s, now_ms)
        elif isinstance(s, FollowerState):
            self._poll_follower(s, now_ms)
        elif isinstance(s, CandidateState | ProspectiveState):
            if now_ms >= s.election_deadline_ms:
                self._transition_to_prospective(now_ms)
            else:
                self._send_votes(s, now_ms)
        elif now_ms >= s.election_deadline_ms:
            self._transition_to_prospective(now_ms)
        elif isinstance(s, ResignedState):
            self._send_end_quorum_epoch(s, now_ms)
        return self._drain()

    def handle(self, now_ms: int, envelope: m.Envelope) -> list[m.Envelope]:
        """Process one inbound request or response; returns the messages to send."""
        self._maybe_start(now_ms)
        if envelope.destination != self.node_id or envelope.source not in self.voters:
            return []
        msg, src, cid = envelope.message, envelope.source, envelope.correlation_id
        if isinstance(msg, m.VoteRequest):
            self._handle_vote_request(src, cid, msg, now_ms)
        elif isinstance(msg, m.VoteResponse):
            self._handle_vote_response(src, cid, msg, now_ms)
        elif isinstance(msg, m.BeginQuorumEpochRequest):
            self._handle_begin_quorum_epoch(src, cid, msg, now_ms)
        elif isinstance(msg, m.EndQuorumEpochRequest):
            self._handle_end_quorum_epoch(src, cid, msg, now_ms)
        elif isinstance(msg, m.BeginQuorumEpochResponse | m.EndQuorumEpochResponse):
            self._handle_epoch_response(src, msg, now_ms)
        elif isinstance(msg, m.FetchRequest):
            self._handle_fetch_request(src, cid, msg, now_ms)
        elif isinstance(msg, m.FetchResponse):
            self._handle_fetch_response(src, cid, msg, now_ms)
        elif isinstance(msg, m.FetchSnapshotRequest):
            self._handle_fetch_snapshot_request(src, cid, msg, now_ms)
        else:
            self._handle_fetch_snapshot_response(src, cid, msg, now_ms)
        return self._drain()

    def append(self, now_ms: int, payloads: Sequence[bytes]) -> int | NotLeader:
        """Leader only: append ``payloads`` in the current epoch; returns the last offset.

        The entries are flushed and counted at the next ``poll``; they are committed when
        the high watermark passes them, and may be lost if leadership changes first.
        """
        self._maybe_start(now_ms)
        if not isinstance(self._state, LeaderState):
            return NotLeader(self.leader_id, self.epoch)
        if not payloads:
            raise ValueError("nothing to append")
        entries = self.log.append_as_leader(payloads, self.epoch)
        self._complete_parked_fetches(self._state, now_ms, force=False)
        return entries[-1].offset

    def resign(self, now_ms: int) -> list[m.Envelope]:
        """Graceful shutdown of a leader: EndQuorumEpoch lets the most caught-up voter stand
        at once instead of after a fetch timeout."""
        self._maybe_start(now_ms)
        if isinstance(self._state, LeaderState):
            self._transition_to_resigned(self._state, now_ms)
        return self._drain()

    def create_snapshot(self, end_offset: int, data: bytes) -> None:
        """The state machine's ``data`` after applying everything below ``end_offset``;
        the log drops the prefix and lagging followers get the snapshot instead."""
        if not self.log.log_start_offset < end_offset <= self._applied:
            raise LogInvariantError(f"snapshot at {end_offset} is not applied and in the log")
        self.log.create_snapshot(end_offset, data)

    # ---- transitions (each persists what it must before anything is sent) --------------
    def _maybe_start(self, now_ms: int) -> None:
        if self._started:
            return
        self._started = True
        e = self.store.read()
        if e.leader_id == self.node_id:
            self._state = ResignedState(e.leader_epoch, self._election_deadline(now_ms))
        elif e.has_leader():
            self._state = FollowerState(
                e.leader_epoch, e.leader_id, self._fetch_deadline(now_ms), voted_id=e.voted_id
            )
        else:
            deadline = now_ms if len(self.voters) == 1 else self._election_deadline(now_ms)
            self._state = UnattachedState(e.leader_epoch, deadline, e.voted_id)

    def _leave(self, now_ms: int) -> None:
        if isinstance(self._state, LeaderState):
            self._complete_parked_fetches(self._state, now_ms, force=True)

    def _transition_to_unattached(self, epoch: int, now_ms: int) -> None:
        """A higher epoch without a leader. The election timer is not pushed back: else a
        voter with a stale log could, by standing again and again, keep the voters that
        could win from ever standing (only granting a vote resets the timer)."""
        self._leave(now_ms)
        s = self._state
        deadline = self._election_deadline(now_ms)
        if isinstance(s, FollowerState):
            deadline = min(deadline, s.fetch_deadline_ms)
        elif not isinstance(s, LeaderState):
            deadline = min(deadline, s.election_deadline_ms)
        self.store.write(ElectionState(epoch))
        self._state = UnattachedState(epoch, deadline)

    def _transition_to_follower(self, epoch: int, leader_id: int, now_ms: int) -> None:
        self._leave(now_ms)
        s = self._state
        voted = self._voted_id()
        if isinstance(s, CandidateState):
            voted = self.node_id
        voted = voted if s.epoch == epoch else NO_ID
        self.store.write(ElectionState(epoch, voted, leader_id))
        self._state = FollowerState(epoch, leader_id, self._fetch_deadline(now_ms), voted_id=voted)
        self._send_fetch(self._state, now_ms)

    def _voted_id(self) -> int:
        """Whom this voter voted for in the current epoch, if its state remembers it."""
        s = self._state
        if isinstance(s, UnattachedState | ProspectiveState | FollowerState):
            return s.voted_id
        return NO_ID

    def _transition_to_prospective(self, now_ms: int) -> None:
        """An election timer fired: first find out, with pre-votes, whether standing could
        succeed (KIP-996). A lone voter stands at once."""
        if len(self.voters) == 1:
            self._transition_to_candidate(now_ms)
            return
        self._leave(now_ms)
        voted = self._voted_id()
        state = ProspectiveState(
            self.epoch,
            self._election_deadline(now_ms),
            voted_id=voted,
            granted={self.node_id},
        )
        self._state = state
        self._send_votes(state, now_ms)

    def _transition_to_candidate(self, now_ms: int) -> None:
        self._leave(now_ms)
        self.log.flush()
        epoch = self.epoch + 1
        self.store.write(ElectionState(epoch, self.node_id, NO_ID))
        state = CandidateState(epoch, self._election_deadline(now_ms), granted={self.node_id})
        self._state = state
        if len(state.granted) >= self.majority:
            self._transition_to_leader(state, now_ms)
        else:
            self._send_votes(state, now_ms)

    def _transition_to_leader(self, candidate: CandidateState, now_ms: int) -> None:
        epoch = candidate.epoch
        self.store.write(ElectionState(epoch, self.node_id, self.node_id))
        leader = LeaderState(
            epoch,
            self.log.end_offset,
            {v: VoterProgress(v) for v in self.voters},
            now_ms + self.config.check_quorum_timeout_ms,
        )
        self._state = leader
        change = {
            "version": 0,
            "leader_id": self.node_id,
            "voters": list(self.voters),
            "granting_voters": sorted(candidate.granted),
        }
        self.log.append_as_leader([json.dumps(change).encode()], epoch, control=True)
        self._poll_leader(leader, now_ms)

    def _transition_to_resigned(self, leader: LeaderState, now_ms: int) -> None:
        self._leave(now_ms)
        others = [r for r in leader.replicas.values() if r.replica_id != self.node_id]
        others.sort(key=lambda r: (-r.log_end_offset, r.replica_id))
        state = ResignedState(
            leader.epoch, self._election_deadline(now_ms), tuple(r.replica_id for r in others)
        )
        self._state = state
        self._send_end_quorum_epoch(state, now_ms)

    def _maybe_handle_common_response(self, leader_id: int, epoch: int, now_ms: int) -> bool:
        """Every response says who leads which epoch; learn from it (Kafka's
        ``maybeHandleCommonResponse``). True if the response is stale or consumed."""
        if epoch > self.epoch:
            if leader_id not in (NO_ID, self.node_id):
                self._transition_to_follower(epoch, leader_id, now_ms)
            else:
                self._transition_to_unattached(epoch, now_ms)
            return True
        if epoch < self.epoch:
            return True
        if leader_id not in (NO_ID, self.node_id) and self.role in (
            Role.UNATTACHED,
            Role.PROSPECTIVE,
            Role.CANDIDATE,
        ):
            self._transition_to_follower(epoch, leader_id, now_ms)
            return True
        return False
