"""The pull half of the quorum: Fetch and FetchSnapshot, leader and follower sides.

Split from ``node.py`` only to keep files short; ``RaftNode`` is the one class that uses
it. KRaft replicates by *pull*: a follower sends Fetch(``fetch_offset``,
``last_fetched_epoch``); the leader checks that position against its epoch cache and
answers with entries, with a ``diverging_epoch`` (the follower truncates and fetches
again), or with a ``snapshot_id`` (the follower is below the leader's log start and
switches to FetchSnapshot). A fetch also acknowledges: ``fetch_offset`` is the follower's
flushed log end, from which the leader computes the high watermark. A Fetch with nothing
new is parked for ``max_wait_ms`` (Kafka's fetch purgatory) so an idle quorum does not spin.
"""

from __future__ import annotations

from kafkalite.raft import messages as m
from kafkalite.raft.base import NodeBase
from kafkalite.raft.log import Entry, LogInvariantError, ValidationKind
from kafkalite.raft.roles import FollowerState, LeaderState, ParkedFetch, SnapshotFetch, State
from kafkalite.raft.snapshot import OffsetAndEpoch, Snapshot


class FetchingMixin(NodeBase):
    """Fetch-side behaviour of ``RaftNode``."""

    # ---- leader ----------------------------------------------------------------------------
    def _poll_leader(self, s: LeaderState, now_ms: int) -> None:
        """Flush, count our own flushed end, answer due parked fetches, nag voters that have
        not heard of this epoch, and resign if a majority has gone quiet (check quorum)."""
        if self.log.flushed_end_offset < self.log.end_offset:
            self.log.flush()  # one fsync covers every append since the last poll
        s.update_replica(self.node_id, self.log.flushed_end_offset, now_ms, self.log.end_offset)
        self._maybe_update_high_watermark(s, now_ms)
        self._complete_parked_fetches(s, now_ms, force=False)
        for voter, replica in s.replicas.items():
            sent = s.begin_sent_ms.get(voter)
            if (
                voter != self.node_id
                and replica.log_end_offset < 0
                and (sent is None or now_ms >= sent + self.config.request_timeout_ms)
            ):
                s.begin_sent_ms[voter] = now_ms
                self._send_request(voter, m.BeginQuorumEpochRequest(self.node_id, s.epoch))
        if now_ms >= s.check_quorum_deadline_ms:
            since = now_ms - self.config.check_quorum_timeout_ms
            if s.fetched_recently(since) < self.majority:
                self._transition_to_resigned(s, now_ms)
                return
            s.check_quorum_deadline_ms = now_ms + self.config.fetch_timeout_ms // 2

    def _maybe_update_high_watermark(self, s: LeaderState, now_ms: int) -> None:
        new = s.maybe_update_high_watermark(self._high_watermark)
        if new is not None:
            self._high_watermark = new
            self._complete_parked_fetches(s, now_ms, force=True)

    def _complete_parked_fetches(self, s: LeaderState, now_ms: int, *, force: bool) -> None:
        """Answer parked fetches that have new entries, are due, or (``force``) all of them."""
        for replica_id, parked in list(s.parked.items()):
            has_data = self.log.end_offset > parked.request.fetch_offset
            if force or has_data or now_ms >= parked.deadline_ms:
                del s.parked[replica_id]
                s.high_watermark_sent[replica_id] = self._high_watermark
                self._respond(
                    replica_id, parked.correlation_id, self._fetch_records(parked.request)
                )

    def _fetch_records(self, req: m.FetchRequest) -> m.FetchResponse:
        records = self.log.read(req.fetch_offset, self.config.fetch_max_entries)
        return self._fetch_response(m.NONE, records=records)

    def _fetch_response(
        self,
        error: int,
        *,
        diverging_epoch: m.EpochEndOffset | None = None,
        snapshot_id: OffsetAndEpoch | None = None,
        records: tuple[Entry, ...] = (),
    ) -> m.FetchResponse:
        s = self._state
        leader = (
            self.node_id
            if isinstance(s, LeaderState)
            else (s.leader_id if isinstance(s, FollowerState) else -1)
        )
        return m.FetchResponse(
            error,
            leader,
            s.epoch,
            self._high_watermark_to_send(s),
            self.log.log_start_offset,
            diverging_epoch,
            snapshot_id,
            records,
        )

    def _high_watermark_to_send(self, s: State) -> int:
        """-1 (unknown) from a leader until an entry of its epoch has committed, as Kafka's
        ``LeaderState.highWatermark()`` is empty until then: what it held before may be
        less than what was committed (after every voter restarted, each starts from its
        log start), and a follower told so would take itself for caught up."""
        if isinstance(s, LeaderState) and self._high_watermark <= s.epoch_start_offset:
            return -1
        return self._high_watermark

    def _leader_error(self, current_leader_epoch: int) -> int:
        """Kafka's ``validateLeaderOnlyRequest``."""
        if current_leader_epoch < self._state.epoch:
            return m.FENCED_LEADER_EPOCH
        if current_leader_epoch > self._state.epoch:
            return m.UNKNOWN_LEADER_EPOCH
        return m.NONE if isinstance(self._state, LeaderState) else m.NOT_LEADER_OR_FOLLOWER

    def _handle_fetch_request(self, src: int, cid: int, req: m.FetchRequest, now_ms: int) -> None:
        error = self._leader_error(req.current_leader_epoch)
        s = self._state
        if error != m.NONE or not isinstance(s, LeaderState):
            self._respond(src, cid, self._fetch_response(error))
            return
        s.begin_sent_ms.pop(src, None)
        superseded = s.parked.pop(src, None)
        if superseded is not None:
            # the voter stopped waiting and asked again: answer the old Fetch too (it
            # ignores the answer), so that nothing on the way waits for it in vain
            self._respond(src, superseded.correlation_id, self._fetch_response(m.NONE))
        check = self.log.validate_offset_and_epoch(req.fetch_offset, req.last_fetched_epoch)
        if check.kind is ValidationKind.SNAPSHOT:
            s.update_replica(src, s.replicas[src].log_end_offset, now_ms, self.log.end_offset)
            self._respond(
                src, cid, self._fetch_response(m.NONE, snapshot_id=check.offset_and_epoch)
            )
            return
        if check.kind is ValidationKind.DIVERGING:
            diverging = m.EpochEndOffset(
                check.offset_and_epoch.epoch, check.offset_and_epoch.end_offset
            )
            self._respond(src, cid, self._fetch_response(m.NONE, diverging_epoch=diverging))
            return
        s.update_replica(src, req.fetch_offset, now_ms, self.log.end_offset)
        self._maybe_update_high_watermark(s, now_ms)
        response = self._fetch_records(req)
        # Park only a voter that has nothing to learn: no entries, and the high watermark
        # it last got is current. The fetch that brought the first follower's ack commits
        # an entry; the other follower's, arriving just after, would otherwise wait the
        # whole max wait to hear of that commit, and its broker to apply it.
        knows_high_watermark = s.high_watermark_sent.get(src) == self._high_watermark
        if not response.records and req.max_wait_ms > 0 and knows_high_watermark:
            s.parked[src] = ParkedFetch(src, cid, req, now_ms + req.max_wait_ms)
        else:
            s.high_watermark_sent[src] = self._high_watermark
            self._respond(src, cid, response)

    def _handle_fetch_snapshot_request(
        self, src: int, cid: int, req: m.FetchSnapshotRequest, now_ms: int
    ) -> None:
        error = self._leader_error(req.current_leader_epoch)
        snapshot = self.log.snapshots.read(req.snapshot_id) if error == m.NONE else None
        if error == m.NONE and snapshot is None:
            error = m.SNAPSHOT_NOT_FOUND
        elif snapshot is not None and req.position > len(snapshot.data):
            error = m.POSITION_OUT_OF_RANGE
        leader_id = self.node_id if isinstance(self._state, LeaderState) else -1
        if snapshot is None or error != m.NONE:
            self._respond(
                src,
                cid,
                m.FetchSnapshotResponse(error, leader_id, self._state.epoch, req.snapshot_id),
            )
            return
        s = self._state
        if isinstance(s, LeaderState) and src in s.replicas:
            s.replicas[src].last_fetch_timestamp = now_ms
        chunk = snapshot.data[req.position : req.position + req.max_bytes]
        self._respond(
            src,
            cid,
            m.FetchSnapshotResponse(
                m.NONE,
                leader_id,
                self._state.epoch,
                req.snapshot_id,
                len(snapshot.data),
                req.position,
                chunk,
            ),
        )

    # ---- follower --------------------------------------------------------------------------
    def _poll_follower(self, s: FollowerState, now_ms: int) -> None:
        if now_ms >= s.fetch_deadline_ms:
            self._transition_to_prospective(now_ms)
        elif s.in_flight_correlation_id is None:
            if now_ms >= s.in_flight_sent_ms:
                self._send_fetch(s, now_ms)
        elif now_ms >= s.in_flight_sent_ms + self.config.request_timeout_ms:
            self._send_fetch(s, now_ms)

    def _send_fetch(self, s: FollowerState, now_ms: int) -> None:
        if s.snapshot_fetch is not None:
            request: m.Message = m.FetchSnapshotRequest(
                self.node_id,
                s.epoch,
                s.snapshot_fetch.snapshot_id,
                len(s.snapshot_fetch.data),
                self.config.fetch_snapshot_max_bytes,
            )
        else:
            request = m.FetchRequest(
                self.node_id,
                s.epoch,
                self.log.end_offset,
                self.log.last_fetched_epoch,
                self.log.log_start_offset,
                self.config.fetch_max_wait_ms,
            )
        s.in_flight_correlation_id = self._send_request(s.leader_id, request)
        s.in_flight_sent_ms = now_ms

    def _accept_response(
        self, src: int, cid: int, leader_id: int, epoch: int, error: int, now_ms: int
    ) -> FollowerState | None:
        """The follower state if this is the answer to our in-flight fetch and it succeeded."""
        if self._maybe_handle_common_response(leader_id, epoch, now_ms):
            return None
        s = self._state
        if (
            not isinstance(s, FollowerState)
            or src != s.leader_id
            or (cid != s.in_flight_correlation_id)
        ):
            return None
        s.in_flight_correlation_id = None
        if error != m.NONE:
            s.in_flight_sent_ms = now_ms + self.config.request_timeout_ms // 4  # back off
            return None
        s.fetch_deadline_ms = self._fetch_deadline(now_ms)
        s.has_fetched = True
        s.leader_gone = False
        return s

    def _handle_fetch_response(
        self, src: int, cid: int, resp: m.FetchResponse, now_ms: int
    ) -> None:
        s = self._accept_response(
            src, cid, resp.leader_id, resp.leader_epoch, resp.error_code, now_ms
        )
        if s is None:
            return
        if resp.diverging_epoch is not None:
            offset = self.log.truncate_to_end_offset(
                OffsetAndEpoch(resp.diverging_epoch.end_offset, resp.diverging_epoch.epoch)
            )
            if offset < self._high_watermark:
                raise LogInvariantError(f"truncated to {offset} below HW {self._high_watermark}")
        elif resp.snapshot_id is not None:
            s.snapshot_fetch = SnapshotFetch(resp.snapshot_id)
        elif not resp.records or resp.records[0].offset == self.log.end_offset:
            # Only a validated fetch proves our log matches the leader's up to our LEO, so
            # only then may the leader's high watermark become ours.
            if resp.records:
                self.log.append_as_follower(resp.records)
                self.log.flush()
            hw = min(resp.high_watermark, self.log.end_offset)
            self._high_watermark = max(self._high_watermark, hw)
        self._send_fetch(s, now_ms)

    def _handle_fetch_snapshot_response(
        self, src: int, cid: int, resp: m.FetchSnapshotResponse, now_ms: int
    ) -> None:
        s = self._accept_response(src, cid, resp.leader_id, resp.leader_epoch, m.NONE, now_ms)
        if s is None:
            return
        fetch = s.snapshot_fetch
        if resp.error_code != m.NONE or fetch is None or fetch.snapshot_id != resp.snapshot_id:
            s.snapshot_fetch = None  # start over from a Fetch: the leader names its snapshot
        elif resp.position == len(fetch.data):
            fetch.data += resp.unaligned_records
            if len(fetch.data) >= resp.size:
                self._install_snapshot(s, Snapshot(fetch.snapshot_id, bytes(fetch.data)))
        self._send_fetch(s, now_ms)

    def _install_snapshot(self, s: FollowerState, snapshot: Snapshot) -> None:
        """Kafka's ``truncateToLatestSnapshot``: the log restarts after the snapshot and the
        state machine is told to load it (``take_committed`` yields it)."""
        self.log.truncate_to_snapshot(snapshot)
        end = snapshot.snapshot_id.end_offset
        self._high_watermark = max(self._high_watermark, end)
        if self._applied < end:
            self._pending_snapshot = snapshot
            self._applied = end
        s.snapshot_fetch = None
