"""One partition as this broker holds it: its log plus the leader's replication state.

Kafka's ``Partition``. The leader keeps each follower's log end offset and decides the
high watermark, the offset below which every in-sync replica has the data (HW = min LEO
over the ISR). Consumers read below the HW only, so nothing they see can vanish in a
failover. This module is pure: no sockets, no timers; callers pass the time in.
Owned by the broker's event loop; not thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kafkalite.protocol.errors import ErrorCode, KafkaError
from kafkalite.storage.errors import UnexpectedAppendOffsetError
from kafkalite.storage.log import AppendInfo, FetchedRecords, Log
from kafkalite.storage.producer_state import AppendOrigin
from kafkalite.storage.txn_index import AbortedTxn

READ_UNCOMMITTED = 0
READ_COMMITTED = 1
FOLLOWER_READ = -1  # not on the wire: how the leader reads for a follower's Fetch


@dataclass(slots=True)
class ReplicaState:
    """What the leader knows of one follower (Kafka's ``Replica``)."""

    broker_id: int
    log_end_offset: int = 0
    last_caught_up_time_ms: int = 0
    last_fetch_leader_log_end_offset: int = -1
    last_fetch_time_ms: int = 0
    log_start_offset: int = -1
    """Its log start offset as its last fetch said (-1: unknown): DeleteRecords completes
    when every live replica's has passed the deleted offset."""
    reached_high_watermark: bool = False
    """At its last fetch it had everything below the HW (and this leader's epoch start):
    the condition for rejoining the ISR, judged when it fetches, not sampled later."""
    fetch_held_until_ms: int = -1
    """Its latest Fetch is at the leader, unanswered, until this time at the latest (the
    Fetch's ``max_wait``); -1 once answered."""
    last_sent_high_watermark: int = -1
    """The HW the latest answer to its Fetch carried: what it knows of the HW."""


@dataclass(slots=True)
class Partition:
    topic: str
    index: int
    log: Log
    local_broker_id: int
    leader: int = -1
    leader_epoch: int = 0
    partition_epoch: int = 0
    replicas: tuple[int, ...] = ()
    isr: tuple[int, ...] = ()
    high_watermark: int = 0
    followers: dict[int, ReplicaState] = field(default_factory=dict)
    epoch_start_offset: int = 0  # the log end offset when this leader's epoch began
    pending_isr: tuple[int, ...] = ()
    """The ISR this leader has proposed (AlterPartition) and not yet seen committed: the
    controller may commit it before this broker replays it, so its members count for the
    HW from the proposal on (see ``maximal_isr``)."""

    @property
    def is_leader(self) -> bool:
        return self.leader == self.local_broker_id

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset

    @property
    def maximal_isr(self) -> set[int]:
        """The ISR and any replica proposed to join it (Kafka's "maximal" ISR, KIP-497).
        The HW waits for all of them: once the controller has committed an expansion, a
        joiner may be elected leader, and it must hold every record below the HW. Counting
        only the replayed ISR, a record written between the commit and its replay here was
        acknowledged without the joiner, and lost if the joiner took over."""
        return {*self.isr, *self.pending_isr}

    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    @property
    def last_stable_offset(self) -> int:
        """The HW, or the first offset of the oldest transaction that is open (or whose
        marker is not below the HW yet) if that is lower: read_committed reads stop here."""
        unstable = self.log.producer_state.first_unstable_offset(self.high_watermark)
        return self.high_watermark if unstable is None else min(unstable, self.high_watermark)

    def make_leader(
        self,
        leader_epoch: int,
        partition_epoch: int,
        replicas: tuple[int, ...],
        isr: tuple[int, ...],
        now_ms: int,
    ) -> None:
        """Become (or stay) leader; a new epoch is stamped into the leader-epoch cache.

        A new leader knows nothing of its followers yet: their log end offsets start
        unknown (-1) and their catch-up clocks start now, so nobody is evicted from the ISR
        before having had a chance to fetch (Kafka's ``Partition.makeLeader``)."""
        new_epoch = not self.is_leader or leader_epoch != self.leader_epoch
        self.leader = self.local_broker_id
        self.leader_epoch = leader_epoch
        self.partition_epoch = partition_epoch
        self.replicas = replicas
        self.isr = isr
        if new_epoch:
            self.pending_isr = ()  # a proposal of the previous epoch is refused
        self.followers = {
            r: ReplicaState(r, -1, now_ms)
            if new_epoch
            else self.followers.get(r, ReplicaState(r, -1, now_ms))
            for r in replicas
            if r != self.local_broker_id
        }
        self.high_watermark = max(self.high_watermark, self.log.log_start_offset)
        if new_epoch:
            self.epoch_start_offset = self.log.log_end_offset
        self.log.leader_epoch_cache.assign(leader_epoch, self.log.log_end_offset)
        self.maybe_increment_leader_hw()

    def make_follower(
        self,
        leader: int,
        leader_epoch: int,
        partition_epoch: int,
        replicas: tuple[int, ...],
        isr: tuple[int, ...],
    ) -> None:
        self.leader = leader
        self.leader_epoch = leader_epoch
        self.partition_epoch = partition_epoch
        self.replicas = replicas
        self.isr = isr
        self.pending_isr = ()
        self.followers = {}
        self.high_watermark = max(self.high_watermark, self.log.log_start_offset)

    # ---- follower --------------------------------------------------------------------

    def append_as_follower(self, records: bytes | memoryview, leader_high_watermark: int) -> int:
        """Append what the leader sent (offsets and epochs as the leader wrote them) and
        follow its high watermark, which a follower can never be ahead of its own log
        end. Returns the number of bytes appended."""
        if records:
            try:
                self.log.append_as_follower(records)
            except UnexpectedAppendOffsetError as exc:
                self._start_at_straddling_batch(records, exc)
        self.high_watermark = max(
            self.high_watermark, min(leader_high_watermark, self.log.log_end_offset)
        )
        return len(records)

    def _start_at_straddling_batch(
        self, records: bytes | memoryview, exc: UnexpectedAppendOffsetError
    ) -> None:
        """The leader's log start lies inside a batch (DeleteRecords to the middle of one):
        an empty follower, told to start there, is sent the whole batch, as every reader
        is. Kafka's ``appendRecordsToFollowerOrFutureReplica``: the log restarts at the
        batch's base offset, the batch is appended, and the log start goes back where it
        was, so the offsets deleted on the leader stay unreadable here too. Any other
        overlap is an error (raised again)."""
        start = self.log.log_start_offset
        if not (self.log.log_end_offset == start and exc.first_offset < start <= exc.last_offset):
            raise exc
        self.log.truncate_fully_and_start_at(exc.first_offset)
        self.log.append_as_follower(records)
        self.log.maybe_increment_log_start_offset(start)

    def follow_log_start_offset(self, leader_log_start_offset: int) -> bool:
        """Move this follower's log start up to its leader's (Kafka's follower does this on
        every fetch response), so records deleted on the leader — DeleteRecords, retention
        — stay deleted when this replica leads. Never past the follower's HW, which the
        leader's log start cannot pass either. True when it moved."""
        return self.log.maybe_increment_log_start_offset(
            min(leader_log_start_offset, self.high_watermark)
        )

    def truncate_fully_and_start_at(self, offset: int) -> tuple[int, int]:
        """Replace the whole log by an empty one starting at the leader's log start ``offset``
        (this replica's log ends below it: nothing it holds is still in the partition).
        Returns the removed range ``[old log start, old log end)``."""
        removed = self.log.log_start_offset, self.log.log_end_offset
        self.log.truncate_fully_and_start_at(offset)
        self.high_watermark = offset
        return removed

    def truncate_to(self, offset: int) -> tuple[int, int]:
        """Drop this replica's records from ``offset`` on; returns the removed range
        ``[offset, old log end)``, empty when there was nothing to remove."""
        old_end = self.log.log_end_offset
        if offset >= old_end:
            return old_end, old_end
        self.log.truncate_to(offset)
        self.high_watermark = min(self.high_watermark, self.log.log_end_offset)
        return offset, old_end

    def check_leader(self, current_leader_epoch: int = -1) -> None:
        """Raise the error a client must see when this broker cannot serve as leader."""
        if not self.is_leader:
            raise KafkaError(
                ErrorCode.not_leader_or_follower, f"broker {self.local_broker_id} is not the leader"
            )
        if current_leader_epoch >= 0 and current_leader_epoch != self.leader_epoch:
            if current_leader_epoch < self.leader_epoch:
                raise KafkaError(ErrorCode.fenced_leader_epoch)
            raise KafkaError(ErrorCode.unknown_leader_epoch)

    def append_records_to_leader(
        self,
        records: bytes | memoryview,
        required_acks: int,
        min_insync_replicas: int,
        origin: AppendOrigin = AppendOrigin.CLIENT,
    ) -> AppendInfo:
        self.check_leader()
        if required_acks == -1 and len(self.isr) < min_insync_replicas:
            raise KafkaError(
                ErrorCode.not_enough_replicas,
                f"ISR {list(self.isr)} is smaller than min.insync.replicas={min_insync_replicas}",
            )
        info = self.log.append_as_leader(records, self.leader_epoch, origin)
        self.maybe_increment_leader_hw()
        return info

    def maybe_increment_leader_hw(self) -> bool:
        """HW = min LEO over the maximal ISR; it never moves backwards. True when it moved."""
        if not self.is_leader:
            return False
        members = self.maximal_isr
        ends = [self.log.log_end_offset]
        ends.extend(f.log_end_offset for r, f in self.followers.items() if r in members)
        new_hw = min(ends)
        if new_hw > self.high_watermark:
            self.high_watermark = new_hw
            return True
        return False

    def check_follower(self, replica_id: int) -> ReplicaState:
        """This broker leads and ``replica_id`` follows: else NOT_LEADER_OR_FOLLOWER."""
        self.check_leader()
        follower = self.followers.get(replica_id)
        if follower is None:
            raise KafkaError(
                ErrorCode.not_leader_or_follower,
                f"broker {replica_id} is not a replica of {self.topic}-{self.index}",
            )
        return follower

    def update_follower_fetch(
        self,
        replica_id: int,
        fetch_offset: int,
        now_ms: int,
        log_start_offset: int = -1,
        max_wait_ms: int = 0,
    ) -> bool:
        """A follower fetching from ``fetch_offset`` has everything below it (Kafka's
        ``updateFollowerFetchState``); its ``log_start_offset`` is where its log now starts;
        the leader may hold the Fetch for ``max_wait_ms``. True when that moved the high
        watermark."""
        follower = self.check_follower(replica_id)
        follower.fetch_held_until_ms = now_ms + max_wait_ms
        follower.log_start_offset = log_start_offset
        leader_end = self.log.log_end_offset
        if fetch_offset >= leader_end:
            follower.last_caught_up_time_ms = now_ms
        elif fetch_offset >= follower.last_fetch_leader_log_end_offset >= 0:
            # it has all the leader had when the previous fetch was answered: caught up
            # then, even if producers have added more since (Kafka's rule)
            follower.last_caught_up_time_ms = max(
                follower.last_caught_up_time_ms, follower.last_fetch_time_ms
            )
        follower.last_fetch_leader_log_end_offset = leader_end
        follower.last_fetch_time_ms = now_ms
        follower.log_end_offset = fetch_offset
        follower.reached_high_watermark = (
            fetch_offset >= self.high_watermark and fetch_offset >= self.epoch_start_offset
        )
        return self.maybe_increment_leader_hw()

    def follower_answered(self, replica_id: int) -> None:
        """The answer to the follower's Fetch is on its way, with the current HW."""
        follower = self.followers.get(replica_id)
        if follower is not None:
            follower.fetch_held_until_ms = -1
            follower.last_sent_high_watermark = self.high_watermark

    def follower_fetch_abandoned(self, replica_id: int, held_until_ms: int) -> None:
        """The Fetch held until ``held_until_ms`` ended unanswered (its connection is
        gone): the follower no longer waits at the log end, unless a newer Fetch of its
        (another hold) already does."""
        follower = self.followers.get(replica_id)
        if follower is not None and follower.fetch_held_until_ms == held_until_ms:
            follower.fetch_held_until_ms = -1

    def follower_lacks_high_watermark(self, replica_id: int) -> bool:
        """The HW moved past what the follower last heard: a Fetch of it the leader holds
        is answered now, so that the follower learns it (Kafka's ``DelayedFetch``, case H,
        KIP-392), rather than after ``replica.fetch.wait.max.ms``."""
        follower = self.followers.get(replica_id)
        return follower is not None and self.high_watermark > follower.last_sent_high_watermark

    def credit_waiting_followers(self, now_ms: int) -> None:
        """A follower whose Fetch the leader is holding at the log end has everything the
        leader has, now: it is caught up at every instant of the wait, not only when the
        Fetch arrived. Kafka judges at arrival only, which is enough with its 500 ms wait
        against 30 s of ``replica.lag.time.max.ms``; here the lag allowed is 1 s, and
        an idle follower's next Fetch comes a wait plus a round trip after the last."""
        end = self.log.log_end_offset
        for follower in self.followers.values():
            if follower.fetch_held_until_ms >= now_ms and follower.log_end_offset >= end:
                follower.last_caught_up_time_ms = max(follower.last_caught_up_time_ms, now_ms)

    def low_watermark(self, alive: Callable[[int], bool]) -> int:
        """The lowest log start offset over this leader and its live followers (Kafka's
        ``lowWatermarkIfLeader``): below it no live replica holds a readable record."""
        self.check_leader()
        starts = [self.log.log_start_offset]
        starts.extend(f.log_start_offset for f in self.followers.values() if alive(f.broker_id))
        return min(starts)

    def read_records(
        self, fetch_offset: int, max_bytes: int, isolation_level: int, min_one_message: bool
    ) -> FetchedRecords:
        """Consumers read below the HW (or LSO under read_committed); followers to the LEO.
        The batches are named in their segment file, not read (a Fetch sends them from
        there)."""
        limit = self.fetch_offset_upper_bound(isolation_level)
        return self.log.read_file_records(fetch_offset, max_bytes, limit, min_one_message)

    def aborted_transactions(self, fetch_offset: int, next_offset: int) -> list[AbortedTxn]:
        """The aborted transactions a read_committed client needs to filter the records
        read from ``fetch_offset`` up to ``next_offset``: those with records there. The
        records go as they are, aborted ones included (as in Kafka): the client drops
        them."""
        if next_offset <= fetch_offset:
            return []
        return self.log.collect_aborted_transactions(fetch_offset, next_offset)

    def fetch_offset_upper_bound(self, isolation_level: int) -> int:
        if isolation_level == FOLLOWER_READ:
            return self.log.log_end_offset
        return self.last_stable_offset if isolation_level == READ_COMMITTED else self.high_watermark
