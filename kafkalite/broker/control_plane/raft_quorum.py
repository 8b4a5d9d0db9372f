"""The metadata quorum: a ``RaftNode`` driven by this broker's event loop and its sockets.

``raft.node`` decides; this module does the I/O it asks for. Timers fire by sleeping until
``next_deadline_ms``; requests to other voters go out on one ``PeerConnection`` per voter
(to their controller listeners) and their responses come back into ``handle``; requests
from other voters arrive through the controller listener's handlers, which wait here for
the node's answer (a parked Fetch is answered later, from ``poll``).

What the rest of the broker sees is the committed metadata log: every committed operation
(one quorum entry, holding the records of one controller operation) is handed, in order, to
the registered listeners; a snapshot resets them. On the quorum leader, once everything of
earlier epochs is committed, the controller becomes active; it appends with ``append`` and
learns that it lost its leadership through the same callback.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from kafkalite.broker.control_plane.gone_voters import GoneVoters
from kafkalite.broker.control_plane_api import NotControllerError, QuorumView, VoterAddress
from kafkalite.events import EventSink, EventType
from kafkalite.metadata.records import (
    MetadataRecord,
    RegisterBrokerRecord,
    UnfenceBrokerRecord,
    decode_batch,
    encode_batch,
)
from kafkalite.network.client import PeerConnection, PeerTimeoutError, PeerUnavailableError
from kafkalite.raft import messages as m
from kafkalite.raft import wire
from kafkalite.raft.clock import ResponsiveClock
from kafkalite.raft.config import RaftConfig
from kafkalite.raft.file_log import FileRaftLog
from kafkalite.raft.log import Entry
from kafkalite.raft.node import NotLeader, QuorumInfo, RaftNode
from kafkalite.raft.quorum_state import FileQuorumStateStore
from kafkalite.raft.roles import Role
from kafkalite.raft.snapshot import Snapshot
from kafkalite.supervision import Spawn

log = logging.getLogger(__name__)

CommitListener = Callable[[int, list[MetadataRecord]], None]
"""Told each committed entry once, with all its records: the controller writes a decision
as one entry (a broker fenced and each partition it led given a new leader), and whoever
applies it must not let a reader see half of it (Kafka's metadata loader publishes an
image per batch, never per record)."""
SnapshotListener = Callable[[int, list[MetadataRecord]], None]
AppliedListener = Callable[[int], None]
ActivationListener = Callable[[bool], None]
VoterRequestListener = Callable[[int, m.Message], None]

INBOUND_TIMEOUT_S = 5.0
STALL_SETTLE_PASSES = 4
"""Loop passes a message needs from the socket to the node (read, frame, handler)."""
TIMER_SLACK_MS = 20
"""The driver wakes for the node's next timer at the next multiple of this on the node's
clock, not to the millisecond. An idle leader's parked Fetches, one per voter, fall due a
millisecond or two apart (it answered their voters together), and each wake-up of an idle
process costs far more than the work it does: rounded, they are answered in one. No timer
of the quorum is that fine (the shortest, the election timeout, is 300 ms)."""


VIEW_REFRESH_MS = 100
"""A voter's Fetch that changes nothing the driver acts on (no commit, no role, no earlier
timer) does not wake it; the driver's pass that refreshes ``view`` (each voter's fetch
progress, what DescribeQuorum answers with) then runs at least this often while Fetches
arrive."""


def with_slack(deadline_ms: int) -> int:
    """``deadline_ms`` rounded up to a multiple of ``TIMER_SLACK_MS``."""
    return -(-deadline_ms // TIMER_SLACK_MS) * TIMER_SLACK_MS


def monotonic_ms() -> int:
    return time.monotonic_ns() // 1_000_000


class RaftQuorum:
    """This broker's voter in the metadata quorum. Owned by one event loop; other threads
    read ``view`` only."""

    def __init__(
        self,
        node_id: int,
        voters: dict[int, VoterAddress],
        directory: Path,
        config: RaftConfig,
        cluster_id: str,
        emit: EventSink,
        snapshot_source: Callable[[], list[MetadataRecord]],
        snapshot_every_bytes: int,
    ) -> None:
        self.node_id = node_id
        self._snapshot_source = snapshot_source
        self._snapshot_every_bytes = snapshot_every_bytes
        self._bytes_since_snapshot = 0
        self.cluster_id = cluster_id
        self.config = config
        self.clock = ResponsiveClock(monotonic_ms)
        """The node's time: this process's own stalls do not count (``raft.clock``)."""
        self._emit = emit
        self._log = FileRaftLog(directory / "__cluster_metadata-0")
        self.node = RaftNode(
            node_id,
            list(voters),
            FileQuorumStateStore(directory / "quorum-state"),
            self._log,
            random.Random(),
            config,
        )
        self._peers = {
            v.node_id: PeerConnection(v.host, v.port, f"kafkalite-raft-{node_id}")
            for v in voters.values()
            if v.node_id != node_id
        }
        self._listeners: list[CommitListener] = []
        self._snapshot_listeners: list[SnapshotListener] = []
        self._activation_listeners: list[ActivationListener] = []
        self._applied_listeners: list[AppliedListener] = []
        self._voter_request_listeners: list[VoterRequestListener] = []
        self._inbound: dict[tuple[int, int], asyncio.Future[m.Message]] = {}
        self._commit_waiters: list[tuple[int, asyncio.Future[None]]] = []
        self._sends: set[asyncio.Task[None]] = set()
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._seen: tuple[Role, int] = (self.node.role, self.node.epoch)
        self._active = False
        self._leader_high_watermark = (-1, -1)
        """(epoch, high watermark) last heard from a leader: what was committed, which this
        voter's own high watermark (capped at its log end) may not yet reach."""
        self._gone = GoneVoters()
        self._unanswered_since: dict[int, int] = {}
        """Voters whose last request timed out, and since when (node clock): logged when
        it starts and when it ends, so that a quorum that cannot elect shows which of its
        links stopped answering (a course stack's once stalled 100 s, 2026-11-29)."""
        self.applied_end_offset = 0
        """Everything below this offset has been handed to the listeners."""
        self.view = QuorumView()
        self._stepped_at_ms = 0
        """When the driver last ran a pass (and refreshed ``view``), on the node's clock."""
        self._driver_at_ms = 0
        """When the driver next runs a pass if nothing wakes it."""

    # ---- what the broker reads --------------------------------------------------------
    @property
    def leader_id(self) -> int:
        return self.node.leader_id

    @property
    def epoch(self) -> int:
        return self.node.epoch

    @property
    def high_watermark(self) -> int:
        return self.node.high_watermark

    @property
    def log_end_offset(self) -> int:
        return self._log.end_offset

    @property
    def is_active(self) -> bool:
        """Leader, with every earlier epoch's entries committed and applied."""
        return self._active

    def describe(self) -> QuorumInfo | None:
        """DescribeQuorum's view (leader only), with wall-clock timestamps as Kafka's."""
        info = self.node.describe_quorum()
        if info is None:
            return None
        shift = time.time_ns() // 1_000_000 - self.clock.now()
        voters = tuple(
            replace(
                v,
                last_fetch_timestamp=v.last_fetch_timestamp + shift
                if v.last_fetch_timestamp >= 0
                else -1,
                last_caught_up_timestamp=v.last_caught_up_timestamp + shift
                if v.last_caught_up_timestamp >= 0
                else -1,
            )
            for v in info.current_voters
        )
        return replace(info, current_voters=voters)

    def in_contact_with_majority(self) -> bool:
        """Whether a metadata change asked for now could commit (see ``RaftNode``)."""
        return self.node.in_contact_with_majority(self.clock.now())

    def is_caught_up(self) -> bool:
        """Knows a leader, has heard its high watermark this epoch, and applied up to it
        (not only up to its own: a voter behind gets part of the log per Fetch, and took
        itself for caught up with the first part)."""
        if self._active:
            return True
        return (
            self.node.role == Role.FOLLOWER
            and self._leader_high_watermark[0] == self.node.epoch
            and self.applied_end_offset >= self._leader_high_watermark[1]
        )

    def catch_up_report(self) -> str:
        """Where this voter stands, in a line for the log of a broker slow to start."""
        stands = (
            f"role {self.node.role.name}, epoch {self.epoch}, leader {self.leader_id}, "
            f"leader's high watermark (epoch, offset) {self._leader_high_watermark}, "
            f"log end {self.log_end_offset}, "
            f"high watermark {self.high_watermark}, applied {self.applied_end_offset}, "
            f"now {self.clock.now()} ms, gone {sorted(self.view.gone_voters)}"
        )
        following = self.node.follower_progress
        return f"{stands}; {following}" if following else stands

    # ---- listeners ----------------------------------------------------------------------
    def register(self, listener: CommitListener) -> None:
        self._listeners.append(listener)

    def on_snapshot(self, listener: SnapshotListener) -> None:
        self._snapshot_listeners.append(listener)

    def on_activation(self, listener: ActivationListener) -> None:
        self._activation_listeners.append(listener)

    def on_applied(self, listener: AppliedListener) -> None:
        """Called with the new ``applied_end_offset`` after the records below it were
        handed out (control entries count too: they carry no records)."""
        self._applied_listeners.append(listener)

    def on_request_from(self, listener: VoterRequestListener) -> None:
        """Called with each request from a voter, and the voter's id, as it arrives
        (a Fetch, and also a Vote or pre-vote: a voter that lost touch with its leader
        asks for votes instead of fetching): proof that the voter's process runs and
        reaches this one."""
        self._voter_request_listeners.append(listener)

    # ---- lifecycle ----------------------------------------------------------------------
    def start(self, spawn: Spawn) -> None:
        """Run the Raft driver, supervised: if applying a record fails, the broker stops
        rather than serve metadata it did not apply."""
        self._task = spawn(self._run(), "raft")

    async def stop(self) -> None:
        """Resign if leading (so another voter stands at once), then stop."""
        if self._task is not None:
            self._dispatch(self.node.resign(self.clock.now()))
            await asyncio.sleep(0.05)  # let EndQuorumEpoch reach the others
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._fail_waiters()
        for task in list(self._sends):
            task.cancel()
        for peer in self._peers.values():
            await peer.close()
        self._log.close()

    def wake(self) -> None:
        """Run the node's next step now: a message arrived or an append waits."""
        self._wake.set()

    async def _run(self) -> None:
        stalls_seen = 0
        while True:
            self._wake.clear()
            if self.clock.stalls != stalls_seen:
                # back from a stall: let the messages that arrived meanwhile reach the
                # node before its timers run, or it would take its peers for silent
                stalls_seen = self.clock.stalls
                for _ in range(STALL_SETTLE_PASSES):
                    await asyncio.sleep(0)
            now = self.clock.now()
            self._dispatch(self.node.poll(now))
            self._after_step()
            self._stepped_at_ms = now
            self._driver_at_ms = with_slack(self.node.next_deadline_ms())
            delay = max(0, self._driver_at_ms - now)
            if delay:
                self.clock.expect(now + delay)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(delay / 1000):
                        await self._wake.wait()

    # ---- appends (active controller only) ---------------------------------------------
    def append(self, records: list[MetadataRecord]) -> int:
        """Append one operation's records to the log now; returns the offset of their
        entry (``committed`` waits for it)."""
        if not self._active:
            raise NotControllerError(self.leader_id)
        result = self.node.append(self.clock.now(), [encode_batch(records)])
        if isinstance(result, NotLeader):
            raise NotControllerError(result.leader_id)
        self.wake()
        return result

    async def committed(self, offset: int) -> None:
        """Wait until the entry at ``offset`` is committed and handed to the listeners
        (at once for -1, or one already applied); raises ``NotControllerError`` if this
        controller loses its leadership first (the entry may or may not survive it)."""
        if offset < self.applied_end_offset:
            return
        if not self._active:
            raise NotControllerError(self.leader_id)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._commit_waiters.append((offset, future))
        await future

    # ---- messages -----------------------------------------------------------------------
    async def handle_request(
        self, source: int, correlation_id: int, message: m.Message
    ) -> m.Message:
        """A quorum request from another voter; returns the node's response to it."""
        was_gone = self._gone.heard_from(source)
        for listener in self._voter_request_listeners:
            listener(source, message)
        key = (source, correlation_id)
        future: asyncio.Future[m.Message] = asyncio.get_running_loop().create_future()
        self._inbound[key] = future
        try:
            self._deliver(m.Envelope(source, self.node_id, correlation_id, message), wake=was_gone)
            if future.done():  # answered at once (most are): no timer to set and cancel
                return future.result()
            async with asyncio.timeout(INBOUND_TIMEOUT_S):
                return await future
        finally:
            if self._inbound.get(key) is future:
                del self._inbound[key]

    def _deliver(self, envelope: m.Envelope, wake: bool = False) -> None:
        """Hand ``envelope`` to the node, and wake the driver if its pass could act on
        what changed (``wake``: it must). A voter's Fetch usually changes nothing it
        acts on: answered at once (or parked until a timer the driver already waits
        for), it moves no high watermark, no role and no earlier timer."""
        message = envelope.message
        node = self.node
        before = self._driver_inputs()
        # a leader whose epoch has committed nothing yet sends -1: what it knew before may
        # be less than what was committed, so it is no sign of being caught up
        if (
            isinstance(message, m.FetchResponse)
            and message.error_code == 0
            and message.high_watermark >= 0
        ):
            self._leader_high_watermark = (message.leader_epoch, message.high_watermark)
        now = self.clock.now()
        self._dispatch(node.handle(now, envelope))
        if (
            wake
            or not isinstance(message, m.FetchRequest)
            or self._driver_inputs() != before
            or with_slack(node.next_deadline_ms()) < self._driver_at_ms
            or now - self._stepped_at_ms >= VIEW_REFRESH_MS
        ):
            self.wake()  # the driver applies what this committed (only it runs listeners)

    def _driver_inputs(self) -> tuple[Role, int, int, int, int]:
        """What a driver's pass acts on beyond the node's timers: commits to apply (the
        high watermark against the log's end) and the role to track."""
        node = self.node
        return (node.role, node.epoch, node.leader_id, node.high_watermark, self._log.end_offset)

    def _dispatch(self, envelopes: list[m.Envelope]) -> None:
        for envelope in envelopes:
            if envelope.is_request:
                task = asyncio.create_task(self._send(envelope))
                self._sends.add(task)
                task.add_done_callback(self._sends.discard)
                continue
            future = self._inbound.pop((envelope.destination, envelope.correlation_id), None)
            if future is not None and not future.done():
                future.set_result(envelope.message)

    async def _send(self, envelope: m.Envelope) -> None:
        peer = self._peers.get(envelope.destination)
        if peer is None:
            return
        body = wire.encode(envelope.message, self.cluster_id)
        timeout = 2 * self.config.request_timeout_ms / 1000
        try:
            response = await peer.request(body, timeout, envelope.correlation_id)
        except PeerTimeoutError:
            self._unanswered(envelope.destination, type(envelope.message).__name__, timeout)
            return  # busy or paused, perhaps, not gone; the node resends after request_timeout_ms
        except PeerUnavailableError:
            # nothing listens there (refused, reset): a killed or stopped voter
            now = self.clock.now()
            stands = self.node.voter_unreachable(now, envelope.destination)
            if self._gone.found_gone(envelope.destination, now, self.log_end_offset) or stands:
                self.wake()  # the view says so at once; a follower of it stands soon
            return  # the node resends after request_timeout_ms
        self._gone.heard_from(envelope.destination)
        self._answered(envelope.destination)
        self._deliver(
            m.Envelope(
                envelope.destination, self.node_id, envelope.correlation_id, wire.decode(response)
            )
        )

    def _unanswered(self, voter_id: int, request: str, timeout_s: float) -> None:
        if voter_id not in self._unanswered_since:
            self._unanswered_since[voter_id] = self.clock.now()
            log.info("voter %d did not answer a %s in %.1f s", voter_id, request, timeout_s)

    def _answered(self, voter_id: int) -> None:
        since = self._unanswered_since.pop(voter_id, None)
        if since is not None:
            silent_s = (self.clock.now() - since) / 1000
            log.info(
                "voter %d answers again, %.1f s after its first unanswered request",
                voter_id,
                silent_s,
            )

    # ---- after every step: apply, activate, complete ----------------------------------
    def _after_step(self) -> None:
        applied = self.applied_end_offset
        for item in self.node.take_committed():
            if isinstance(item, Snapshot):
                self._apply_snapshot(item)
            else:
                self._apply_entry(item)
        if self.applied_end_offset != applied:
            for applied_listener in self._applied_listeners:
                applied_listener(self.applied_end_offset)
        self._track_leadership()
        if self._bytes_since_snapshot >= self._snapshot_every_bytes:
            self._take_snapshot()
        hw = self.node.high_watermark
        gone = self._gone.at(self.clock.now())
        self.view = QuorumView(
            self.leader_id,
            self.epoch,
            hw,
            self.log_end_offset,
            self.applied_end_offset,
            self._active,
            self.describe(),
            self.leader_id == self.node_id or (self.leader_id >= 0 and self.leader_id not in gone),
            gone,
        )
        waiting = []
        for offset, future in self._commit_waiters:
            if offset < min(hw, self.applied_end_offset):
                if not future.done():
                    future.set_result(None)
            else:
                waiting.append((offset, future))
        self._commit_waiters = waiting

    def _apply_entry(self, entry: Entry) -> None:
        """Hand the entry's records to the listeners; only then is it applied."""
        if not entry.control:
            records = decode_batch(entry.payload)
            for record in records:
                if isinstance(record, RegisterBrokerRecord | UnfenceBrokerRecord):
                    self._gone.registered(record.broker_id, entry.offset)
            for listener in self._listeners:
                listener(entry.offset, records)
        self.applied_end_offset = entry.offset + 1
        self._bytes_since_snapshot += len(entry.payload)

    def _apply_snapshot(self, snapshot: Snapshot) -> None:
        end = snapshot.snapshot_id.end_offset
        records = decode_batch(snapshot.data) if snapshot.data else []
        for listener in self._snapshot_listeners:
            listener(end - 1, records)
        self.applied_end_offset = end

    def _track_leadership(self) -> None:
        seen = (self.node.role, self.node.epoch)
        if seen != self._seen:
            role, epoch = seen
            if role == Role.LEADER:
                self._emit(EventType.QUORUM_LEADER_ELECTED, leader=self.node_id, epoch=epoch)
            elif role == Role.FOLLOWER:
                self._emit(EventType.QUORUM_FOLLOWING, leader=self.leader_id, epoch=epoch)
            self._seen = seen
        start = self.node.epoch_start_offset
        should_be_active = start is not None and self.applied_end_offset > start
        if should_be_active != self._active:
            self._active = should_be_active
            if not should_be_active:
                self._fail_waiters()
            self._emit(
                EventType.CONTROLLER_ACTIVATED
                if should_be_active
                else EventType.CONTROLLER_RESIGNED,
                epoch=self.node.epoch,
            )
            for listener in self._activation_listeners:
                listener(should_be_active)

    def _fail_waiters(self) -> None:
        for _, future in self._commit_waiters:
            if not future.done():
                future.set_exception(NotControllerError(self.leader_id))
        self._commit_waiters = []

    def _take_snapshot(self) -> None:
        """Snapshot the image as of everything applied so far; the log before it goes."""
        self._bytes_since_snapshot = 0
        if self.applied_end_offset <= self._log.log_start_offset:
            return
        records = self._snapshot_source()
        self.node.create_snapshot(self.applied_end_offset, encode_batch(records))
        self._emit(
            EventType.METADATA_SNAPSHOT_CREATED,
            end_offset=self.applied_end_offset,
            records=len(records),
        )
