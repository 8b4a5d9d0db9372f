"""Elections: Vote, and the BeginQuorumEpoch/EndQuorumEpoch announcements.

A candidate asks every voter for its vote in a new epoch; a voter grants at most one vote
per epoch, only to a candidate whose log is at least as up to date as its own, and only
after the vote is on disk. The winner announces itself with BeginQuorumEpoch (followers
would find it by fetching anyway; this is faster), and a leader that steps down sends
EndQuorumEpoch so the most caught-up voter stands at once instead of after a timeout.
"""

from __future__ import annotations

from kafkalite.raft import messages as m
from kafkalite.raft.base import NodeBase
from kafkalite.raft.quorum_state import NO_ID, ElectionState
from kafkalite.raft.roles import (
    CandidateState,
    FollowerState,
    LeaderState,
    ProspectiveState,
    ResignedState,
    Role,
    UnattachedState,
)


class ElectionMixin(NodeBase):
    """Election-side behaviour of ``RaftNode``."""

    @property
    def epoch(self) -> int:
        return self._state.epoch

    @property
    def role(self) -> Role:
        return self._state.role

    @property
    def leader_id(self) -> int:
        if isinstance(self._state, LeaderState):
            return self.node_id
        return self._state.leader_id if isinstance(self._state, FollowerState) else NO_ID

    # ---- Vote ----------------------------------------------------------------------------
    def _send_votes(self, s: CandidateState | ProspectiveState, now_ms: int) -> None:
        """Votes for a candidate; pre-votes (for the next epoch) for a prospective."""
        last = self.log.last_offset_and_epoch()
        pre_vote = isinstance(s, ProspectiveState)
        epoch = s.epoch + 1 if pre_vote else s.epoch
        request = m.VoteRequest(epoch, self.node_id, last.epoch, last.end_offset, pre_vote)
        for voter in self.voters:
            answered = voter in s.granted or voter in s.rejected
            sent = s.vote_sent_ms.get(voter)
            if not answered and (sent is None or now_ms >= sent + self.config.request_timeout_ms):
                s.vote_sent_ms[voter] = now_ms
                s.vote_cids[voter] = self._send_request(voter, request)

    def _handle_vote_request(self, src: int, cid: int, req: m.VoteRequest, now_ms: int) -> None:
        if req.pre_vote:
            self._handle_pre_vote(src, cid, req, now_ms)
            return
        if req.candidate_epoch > self.epoch:
            self._transition_to_unattached(req.candidate_epoch, now_ms)
        granted = req.candidate_epoch == self.epoch and self._can_grant_vote(req)
        s = self._state
        if granted and isinstance(s, UnattachedState) and s.voted_id == NO_ID:
            self.store.write(ElectionState(s.epoch, req.candidate_id, NO_ID))
            s.voted_id = req.candidate_id
            s.election_deadline_ms = self._election_deadline(now_ms)
        self._respond(src, cid, m.VoteResponse(m.NONE, self.leader_id, self.epoch, granted))

    def _handle_pre_vote(self, src: int, cid: int, req: m.VoteRequest, now_ms: int) -> None:
        """A pre-vote bumps no epoch to the asked one and persists no vote. It is granted
        only if a real vote could be (the log is at least as up to date) and this voter
        has no leader it heard from recently - so a healthy quorum refuses a returning
        voter, and tells it who leads instead."""
        if req.candidate_epoch - 1 > self.epoch:
            # The asker is already *in* a later epoch (it stood once and lost): learn that
            # epoch, as Raft learns any newer term, or it could never rejoin - nobody
            # would answer it in its own epoch.
            self._transition_to_unattached(req.candidate_epoch - 1, now_ms)
        s = self._state
        has_live_leader = isinstance(s, LeaderState) or (
            isinstance(s, FollowerState)
            and s.has_fetched
            and not s.leader_gone
            and now_ms < s.fetch_deadline_ms
        )
        mine = self.log.last_offset_and_epoch()
        granted = (
            req.candidate_epoch > self.epoch
            and not has_live_leader
            and (req.last_offset_epoch, req.last_offset) >= (mine.epoch, mine.end_offset)
        )
        # a grant names no leader: this voter has none it trusts, and naming the dead one
        # would send the prospective back to following it
        leader = NO_ID if granted else self.leader_id
        self._respond(src, cid, m.VoteResponse(m.NONE, leader, self.epoch, granted))

    def _can_grant_vote(self, req: m.VoteRequest) -> bool:
        """Raft's vote rule in the candidate's epoch: one vote per epoch, and only for a
        candidate whose log is at least as up to date (last epoch, then end offset)."""
        s = self._state
        if not isinstance(s, UnattachedState):
            return False
        if s.voted_id != NO_ID:
            return s.voted_id == req.candidate_id
        mine = self.log.last_offset_and_epoch()
        return (req.last_offset_epoch, req.last_offset) >= (mine.epoch, mine.end_offset)

    def _handle_vote_response(self, src: int, cid: int, resp: m.VoteResponse, now_ms: int) -> None:
        if self._maybe_handle_common_response(resp.leader_id, resp.leader_epoch, now_ms):
            return
        s = self._state
        if isinstance(s, CandidateState | ProspectiveState) and s.vote_cids.get(src) == cid:
            # only answers to this state's own requests count: a late pre-vote grant is
            # not a vote
            (s.granted if resp.vote_granted else s.rejected).add(src)
            if len(s.granted) >= self.majority:
                if isinstance(s, ProspectiveState):
                    self._transition_to_candidate(now_ms)
                else:
                    self._transition_to_leader(s, now_ms)
            elif len(s.rejected) > len(self.voters) - self.majority:
                # Lost (typically a split vote): retry after a short random backoff rather
                # than a whole election timeout, like Kafka's election backoff.
                backoff = now_ms + self.rng.randrange(self.config.election_backoff_max_ms)
                s.election_deadline_ms = min(s.election_deadline_ms, backoff)

    # ---- BeginQuorumEpoch / EndQuorumEpoch -----------------------------------------------
    def _handle_begin_quorum_epoch(
        self, src: int, cid: int, req: m.BeginQuorumEpochRequest, now_ms: int
    ) -> None:
        if req.leader_epoch > self.epoch or (
            req.leader_epoch == self.epoch
            and self.role in (Role.UNATTACHED, Role.PROSPECTIVE, Role.CANDIDATE)
        ):
            self._transition_to_follower(req.leader_epoch, req.leader_id, now_ms)
        error = m.NONE if req.leader_epoch == self.epoch else m.FENCED_LEADER_EPOCH
        self._respond(src, cid, m.BeginQuorumEpochResponse(error, self.leader_id, self.epoch))

    def _handle_end_quorum_epoch(
        self, src: int, cid: int, req: m.EndQuorumEpochRequest, now_ms: int
    ) -> None:
        if req.leader_epoch > self.epoch:
            self._transition_to_follower(req.leader_epoch, req.leader_id, now_ms)
        s = self._state
        if (
            isinstance(s, FollowerState)
            and s.epoch == req.leader_epoch
            and (s.leader_id == req.leader_id)
        ):
            s.fetch_deadline_ms = now_ms + self._end_epoch_backoff(req.preferred_successors)
        error = m.NONE if req.leader_epoch == self.epoch else m.FENCED_LEADER_EPOCH
        self._respond(src, cid, m.EndQuorumEpochResponse(error, self.leader_id, self.epoch))

    def _end_epoch_backoff(self, preferred: tuple[int, ...]) -> int:
        """The first preferred successor stands at once; the others wait longer, so the
        most caught-up voter usually wins without a split vote."""
        cap = self.config.election_backoff_max_ms
        if self.node_id not in preferred:
            return cap
        position = preferred.index(self.node_id)
        return 0 if position == 0 else min(cap, position * cap // 4 + self.rng.randrange(cap // 4))

    def _send_end_quorum_epoch(self, s: ResignedState, now_ms: int) -> None:
        request = m.EndQuorumEpochRequest(self.node_id, s.epoch, s.preferred_successors)
        for voter in s.preferred_successors:
            sent = s.end_sent_ms.get(voter)
            if voter not in s.acked and (
                sent is None or now_ms >= sent + self.config.request_timeout_ms
            ):
                s.end_sent_ms[voter] = now_ms
                self._send_request(voter, request)

    def _handle_epoch_response(
        self, src: int, resp: m.BeginQuorumEpochResponse | m.EndQuorumEpochResponse, now_ms: int
    ) -> None:
        if self._maybe_handle_common_response(resp.leader_id, resp.leader_epoch, now_ms):
            return
        s = self._state
        if isinstance(s, LeaderState) and isinstance(resp, m.BeginQuorumEpochResponse):
            s.begin_sent_ms.pop(src, None)
        elif isinstance(s, ResignedState) and isinstance(resp, m.EndQuorumEpochResponse):
            s.acked.add(src)
