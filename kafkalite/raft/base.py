"""What ``RaftNode``'s parts share: its fields, its timers and how it sends.

``RaftNode`` is split by concern to keep files short: ``node.py`` (public API, role
transitions), ``election.py`` (Vote, BeginQuorumEpoch, EndQuorumEpoch) and
``replication.py`` (Fetch, FetchSnapshot). Each part is a mixin over ``NodeBase``; the
transitions they call are declared here and implemented in ``node.py``.
"""

from __future__ import annotations

import random

from kafkalite.raft import messages as m
from kafkalite.raft.config import RaftConfig
from kafkalite.raft.log import RaftLog
from kafkalite.raft.quorum_state import QuorumStateStore
from kafkalite.raft.roles import CandidateState, LeaderState, State
from kafkalite.raft.snapshot import Snapshot


class NodeBase:
    """Fields and plumbing of one voter. Not thread-safe: one task owns a node."""

    node_id: int
    voters: tuple[int, ...]
    store: QuorumStateStore
    log: RaftLog
    rng: random.Random
    config: RaftConfig
    _state: State
    _outbox: list[m.Envelope]
    _next_correlation_id: int
    _high_watermark: int
    _applied: int
    _pending_snapshot: Snapshot | None

    @property
    def majority(self) -> int:
        return len(self.voters) // 2 + 1

    def _fetch_deadline(self, now_ms: int) -> int:
        """``fetch.timeout.ms`` plus up to half an election timeout of jitter, so that the
        followers of a dead leader rarely stand at the same moment and split the vote."""
        return (
            now_ms
            + self.config.fetch_timeout_ms
            + self.rng.randrange(max(1, self.config.election_timeout_ms // 2))
        )

    def _election_deadline(self, now_ms: int) -> int:
        timeout = self.config.election_timeout_ms
        return now_ms + timeout + self.rng.randrange(timeout)

    # ---- transitions, implemented by RaftNode ----------------------------------------------
    def _transition_to_unattached(self, epoch: int, now_ms: int) -> None:
        raise NotImplementedError

    def _transition_to_follower(self, epoch: int, leader_id: int, now_ms: int) -> None:
        raise NotImplementedError

    def _transition_to_candidate(self, now_ms: int) -> None:
        raise NotImplementedError

    def _transition_to_prospective(self, now_ms: int) -> None:
        raise NotImplementedError

    def _transition_to_leader(self, candidate: CandidateState, now_ms: int) -> None:
        raise NotImplementedError

    def _transition_to_resigned(self, leader: LeaderState, now_ms: int) -> None:
        raise NotImplementedError

    def _maybe_handle_common_response(self, leader_id: int, epoch: int, now_ms: int) -> bool:
        raise NotImplementedError

    # ---- plumbing --------------------------------------------------------------------------
    def _send_request(self, destination: int, message: m.Message) -> int:
        self._next_correlation_id += 1
        cid = self._next_correlation_id
        self._outbox.append(m.Envelope(self.node_id, destination, cid, message))
        return cid

    def _respond(self, destination: int, cid: int, message: m.Message) -> None:
        self._outbox.append(m.Envelope(self.node_id, destination, cid, message))

    def _drain(self) -> list[m.Envelope]:
        out, self._outbox = self._outbox, []
        return out
