"""The active controller: the quorum leader's state machine, its operations pipelined.

As in Kafka's ``QuorumController``, an operation is decided against the controller's image,
its records are appended to the metadata log and applied to that image at once, in one
step with no ``await`` between (``_apply``): the loop runs one step at a time, so the
next operation is decided against an image that already holds them, and two CreateTopics
of one name cannot both pass. The operation is answered once its records are committed.
Nothing waits for an earlier operation's commit, so a fence after a kill is not queued
behind a flood of AlterPartition. An operation that writes nothing is answered once
everything applied before it is committed, since its answer may rest on it (Kafka does
the same). A controller that loses its leadership reverts its image to the committed
records (``ControllerImage.revert``); its waiting operations fail with
``NotControllerError`` and are retried at the new controller.

Only the node whose quorum is active runs operations; anywhere else they raise
``NotControllerError`` and the caller (``ControllerChannel``) sends them to the leader.

While active it also judges which brokers are alive (``controller.heartbeats``):

- a broker whose process is gone is fenced at once: its connection to this controller
  closed (``watch_connection``: the operating system closes a killed process's sockets;
  the link proxies of a local cluster pass that on), or, right after an election, the
  quorum found its voter's connection refused or reset (``gone_voters``). A broker that
  registered again in the meantime is not;
- a silent broker (paused, cut off, hung: nothing closes) is fenced once its session
  runs out.

It also moves leadership back to preferred replicas.

An admin change (CreateTopics, DeleteTopics, CreatePartitions, configs, elections,
reassignments) is answered once every live broker has replayed it, as its heartbeats
report, so a student who creates a topic can use it on any broker in the next line;
the wait is bounded by the request's timeout. Brokers heartbeat at once when their image
advances, so the wait is a round trip, not a heartbeat interval.

Runs on the broker's control plane (its own thread and loop): nothing here waits behind
client requests.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Callable, Coroutine, Sequence
from functools import partial
from typing import Any, TypeVar

from kafkalite.broker.context import Connection
from kafkalite.broker.control_plane.raft_quorum import STALL_SETTLE_PASSES, RaftQuorum
from kafkalite.broker.control_plane_api import NotControllerError
from kafkalite.controller.cluster_control import HeartbeatReply
from kafkalite.controller.controller_image import ControllerImage
from kafkalite.controller.heartbeats import BrokerHeartbeats
from kafkalite.controller.quorum_controller import QuorumController
from kafkalite.controller.replication_control import PREFERRED_ELECTION, AlterPartitionReply
from kafkalite.controller.results import ApiResult, ControllerResult
from kafkalite.controller.topic_control import CreatableTopic, CreatedTopic
from kafkalite.events import EventSink, EventType
from kafkalite.raft import messages as m
from kafkalite.supervision import Spawn
from kafkalite.ticks import sleep_until_tick

T = TypeVar("T")
log = logging.getLogger(__name__)

PROPAGATION_TIMEOUT_S = 5.0
"""How long an admin change without a timeout of its own (configs; librdkafka's default
``operation_timeout`` of 0) waits for every live broker to replay it."""
SHUTDOWN_PROPAGATION_TIMEOUT_S = 0.8
"""How long a controlled shutdown waits for the live brokers to replay the fencing
(within the 1.5 s the stopping broker allows the whole step)."""


class ControllerService:
    def __init__(
        self,
        quorum: RaftQuorum,
        images: ControllerImage,
        now_ms: Callable[[], int],
        spawn: Spawn,
        emit: EventSink,
    ) -> None:
        """``now_ms``: the control plane's responsive clock (``quorum.clock.now``), which
        skips this process's own stalls; ``emit``: where fences say why."""
        self.emit = emit
        self.quorum = quorum
        self.spawn = spawn
        self.images = images
        self.image = images.image
        self.controller = QuorumController(self.image)
        self.now_ms = now_ms
        self.heartbeats = BrokerHeartbeats(self._session_timeout_ms())
        self._heard = asyncio.Event()
        """Set (and replaced) on every heartbeat: what propagation waits on."""
        self._contact = asyncio.Event()
        """Set by a contact that moves the fence check's next look earlier (one whose
        session would run out before it): a contact only pushes a session's end later,
        so the many that do not need no wake-up (one per quorum Fetch and heartbeat)."""
        self._fence_check_at_ms = 0
        """When the fence check looks next, as it last planned."""
        self._tasks: list[asyncio.Task[None]] = []
        self._announcements: set[asyncio.Task[None]] = set()
        self._watched: weakref.WeakKeyDictionary[Connection, tuple[int, int]] = (
            weakref.WeakKeyDictionary()
        )
        """The connections brokers reach this controller on, with the broker and the
        epoch of its registration each came from."""
        self.session_ms: int | None = None
        """``broker.session.timeout.ms`` while this controller is active (``/state``);
        replaced whole, read from any thread."""
        quorum.on_activation(self._on_activation)
        quorum.on_request_from(self._heard_from_voter)

    def _session_timeout_ms(self) -> int:
        return self.image.broker_int("broker.session.timeout.ms")

    # ---- operations: decided, appended and applied at once; answered when committed ---
    def _apply(self, operation: Callable[[], ControllerResult[T]]) -> tuple[T, int, bool]:
        """Decide ``operation`` against the image, append its records and apply them, all
        in this one step. Returns its response, the offset to wait for before answering,
        and whether it wrote records of its own."""
        if not self.quorum.is_active:
            raise NotControllerError(self.quorum.leader_id)
        result = operation()
        if not result.records:
            return result.response, self.images.applied_end, False
        offset = self.quorum.append(result.records)
        self.images.apply(offset, result.records)
        return result.response, offset, True

    async def _commit(self, operation: Callable[[], ControllerResult[T]]) -> tuple[T, int]:
        """Run ``operation``; answer once what it rests on is committed. Returns its
        response and the offset of its records (-1 if it wrote none)."""
        response, offset, wrote = self._apply(operation)
        await self.quorum.committed(offset)
        return response, offset if wrote else -1

    async def _run(self, operation: Callable[[], ControllerResult[T]]) -> T:
        response, _ = await self._commit(operation)
        return response

    async def _admin(
        self, operation: Callable[[], ControllerResult[T]], timeout_s: float | None
    ) -> T:
        """An admin change: committed, then answered once every live broker replayed it
        (or ``timeout_s`` passed; the change stands either way)."""
        response, offset = await self._commit(operation)
        if offset >= 0:
            await self._propagated(offset, timeout_s or PROPAGATION_TIMEOUT_S)
        return response

    async def _propagated(self, offset: int, timeout_s: float) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            live = [b.broker_id for b in self.image.live_brokers()]
            behind = self.heartbeats.behind(live, offset)
            remaining = deadline - loop.time()
            if not behind:
                return
            if remaining <= 0 or not self.quorum.is_active:
                log.info("offset %d not yet replayed by brokers %s; answering", offset, behind)
                return
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(remaining):
                    await self._heard.wait()

    # ---- activation ------------------------------------------------------------------
    def _on_activation(self, active: bool) -> None:
        for task in [*self._tasks, *self._announcements]:
            task.cancel()
        self._tasks = []
        self.session_ms = None
        if not active:
            self.images.revert()
            return
        self.heartbeats.reset(self.image.brokers, self.now_ms())
        self._tasks = [
            self.spawn(self._fence_loop(), "fence-check"),
            self.spawn(self._rebalance_loop(), "leader-rebalance"),
        ]

    def _heard_from_voter(self, node_id: int, request: m.Message) -> None:
        """Every broker here is also a voter of the metadata quorum (combined mode), and a
        voter's requests reach the active controller from the same process and over the
        same link as its heartbeats, every ``controller.quorum.fetch.max.wait.ms`` or
        sooner: each counts as contact, as a heartbeat does (a voter whose Fetch timed out
        asks for pre-votes instead, and those count too). Kafka judges a broker's session
        by its heartbeats alone; the heartbeats here still carry everything else (the
        replayed metadata offset, fencing and shutdown requests), at once when it changes."""
        if self.quorum.is_active:
            self._touch(node_id)

    def watch_connection(
        self, connection: Connection, broker_id: int, broker_epoch: int | None = None
    ) -> None:
        """``broker_id`` (registered at ``broker_epoch``; by default its current epoch)
        reaches this controller over ``connection``: if its end closes, its process is
        gone, and the broker is fenced at once."""
        if not self.quorum.is_active or broker_id == self.quorum.node_id:
            return
        if broker_epoch is None:
            registration = self.image.brokers.get(broker_id)
            if registration is None:
                return
            broker_epoch = registration.broker_epoch
        if connection not in self._watched:
            connection.on_peer_closed(partial(self._connection_closed, connection))
        self._watched[connection] = (broker_id, broker_epoch)

    def _connection_closed(self, connection: Connection) -> None:
        watched = self._watched.pop(connection, None)
        if watched is None or not self.quorum.is_active:
            return
        broker_id, broker_epoch = watched
        self._fence(
            broker_id, broker_epoch, EventType.BROKER_CONNECTION_CLOSED, peer=connection.peer
        )

    async def stop(self) -> None:
        tasks = [*self._tasks, *self._announcements]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    # ---- fencing ---------------------------------------------------------------------
    def _fence(
        self, broker_id: int, broker_epoch: int | None, reason: EventType, **why: Any
    ) -> None:
        """Fence ``broker_id`` now, if it is still live at ``broker_epoch`` (its current
        one if None: it did not register again meanwhile); once that is committed, say
        why (``reason``)."""
        try:
            fenced_epoch, offset, wrote = self._apply(
                partial(self._fence_if_live, broker_id, broker_epoch)
            )
        except NotControllerError:
            return
        if not wrote:
            return
        fields = {"broker_id": broker_id, "broker_epoch": fenced_epoch, **why}
        self._announce(self._committed_then_say(offset, reason, fields))

    def _fence_if_live(
        self, broker_id: int, broker_epoch: int | None
    ) -> ControllerResult[int | None]:
        current = self.image.brokers.get(broker_id)
        if current is None or current.fenced:
            return ControllerResult([], None)
        if broker_epoch is not None and current.broker_epoch != broker_epoch:
            return ControllerResult([], None)  # it registered again: a new process
        return ControllerResult(
            self.controller.fence_broker(broker_id).records, current.broker_epoch
        )

    def _announce(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._announcements.add(task)
        task.add_done_callback(self._announcements.discard)

    async def _committed_then_say(
        self, offset: int, reason: EventType, fields: dict[str, Any]
    ) -> None:
        try:
            await self.quorum.committed(offset)
        except NotControllerError:
            return
        self.emit(reason, **fields)
        log.info("fenced broker %d (%s): %s", fields["broker_id"], reason, fields)

    async def _fence_loop(self) -> None:
        """Fence the brokers whose process the quorum found gone, then those whose
        session runs out. Wakes when the first session would run out (not on a fixed
        tick), and looks again at every contact, which moves that moment on: an idle
        controller's process then wakes for a session that really runs out, not every
        few hundred ms to find that none has."""
        for voter in self.quorum.view.gone_voters:
            self._fence(voter, None, EventType.BROKER_CONNECTION_CLOSED, peer="quorum")
        while True:
            session_ms = self._session_timeout_ms()
            self.heartbeats.session_timeout_ms = session_ms
            now = self.now_ms()
            unfenced = [b.broker_id for b in self.image.live_brokers()]
            for broker_id in self.heartbeats.expired(unfenced, now, self.quorum.node_id):
                silences = self.heartbeats.silences_ms(unfenced, now)
                self._fence(
                    broker_id,
                    None,
                    EventType.BROKER_SESSION_EXPIRED,
                    silent_ms=silences.pop(broker_id),
                    session_ms=session_ms,
                    others_silent_ms=silences,
                )
            self.session_ms = session_ms
            expiry = self.heartbeats.next_expiry_ms(unfenced, now, self.quorum.node_id)
            wake_ms = max(expiry + 1, now + 10)
            self._contact.clear()
            self._fence_check_at_ms = wake_ms
            try:
                async with asyncio.timeout((wake_ms - now) / 1000):
                    await self._contact.wait()
                continue
            except TimeoutError:
                pass
            # A contact read from its socket in the loop pass that ended this wait reaches
            # ``heartbeats`` a few passes later (framing, then its handler): let it count
            # before the sessions are judged.
            for _ in range(STALL_SETTLE_PASSES):
                await asyncio.sleep(0)

    async def _rebalance_loop(self) -> None:
        """``auto.leader.rebalance.enable``: the preferred replica leads when it can."""
        while True:
            interval = self.image.broker_int("leader.imbalance.check.interval.seconds")
            await sleep_until_tick(interval)
            if not self.image.broker_bool("auto.leader.rebalance.enable"):
                continue
            try:
                await self._run(lambda: self.controller.elect_leaders(PREFERRED_ELECTION, None))
            except NotControllerError:
                return

    # ---- operations ------------------------------------------------------------------
    def _touch(self, broker_id: int, metadata_offset: int | None = None) -> None:
        now = self.now_ms()
        self.heartbeats.touch(broker_id, now, metadata_offset)
        if now + self.heartbeats.session_timeout_ms < self._fence_check_at_ms:
            self._contact.set()

    @property
    def silences_ms(self) -> dict[int, int] | None:
        """Each registered broker's silence now, while active (``/state``, read from any
        thread)."""
        if self.session_ms is None:
            return None
        return self.heartbeats.silences_ms(list(self.image.brokers), self.now_ms())

    @property
    def longest_silence_ms(self) -> int | None:
        """The longest silence a live broker ended within its session since this
        controller became active (``/state``): how close one came to being fenced."""
        return None if self.session_ms is None else self.heartbeats.longest_silence_ms

    async def register_broker(
        self, broker_id: int, host: str, port: int, rack: str | None, incarnation_id: str
    ) -> int:
        """The broker epoch is the offset its registration entry gets: the log end when
        it is decided, as it is appended in the same step."""
        self._touch(broker_id)
        return await self._run(
            lambda: self.controller.register_broker(
                broker_id, host, port, rack, incarnation_id, self.quorum.log_end_offset
            )
        )

    async def heartbeat(
        self,
        broker_id: int,
        broker_epoch: int,
        metadata_offset: int,
        want_fence: bool,
        want_shut_down: bool,
    ) -> HeartbeatReply:
        self._touch(broker_id, metadata_offset)
        self._heard.set()
        self._heard = asyncio.Event()
        reply, offset = await self._commit(
            lambda: self.controller.heartbeat(
                broker_id, broker_epoch, metadata_offset, want_fence, want_shut_down
            )
        )
        if want_shut_down and offset >= 0:
            # a controlled shutdown ends once the live brokers know this one is fenced:
            # until they do, their Metadata lists it, and a client that picks it for its
            # next request right after it stopped fails (kafka-python: ECONNREFUSED)
            await self._propagated(offset, SHUTDOWN_PROPAGATION_TIMEOUT_S)
        return reply

    async def allocate_producer_ids(self, broker_id: int, broker_epoch: int) -> int:
        return await self._run(
            lambda: self.controller.allocate_producer_ids(broker_id, broker_epoch)
        )

    async def create_topics(
        self,
        topics: Sequence[CreatableTopic],
        validate_only: bool = False,
        timeout_s: float | None = None,
    ) -> list[CreatedTopic]:
        return await self._admin(
            lambda: self.controller.create_topics(topics, validate_only), timeout_s
        )

    async def delete_topics(
        self, names: Sequence[str], timeout_s: float | None = None
    ) -> list[tuple[str, ApiResult]]:
        return await self._admin(lambda: self.controller.delete_topics(names), timeout_s)

    async def create_partitions(
        self,
        topic: str,
        count: int,
        validate_only: bool = False,
        assignments: Sequence[tuple[int, ...]] | None = None,
        timeout_s: float | None = None,
    ) -> ApiResult:
        return await self._admin(
            lambda: self.controller.create_partitions(topic, count, validate_only, assignments),
            timeout_s,
        )

    async def alter_configs(
        self,
        resource_type: str,
        resource_name: str,
        changes: dict[str, str | None],
        replace_all: bool,
        validate_only: bool = False,
    ) -> ApiResult:
        return await self._admin(
            lambda: self.controller.alter_configs(
                resource_type, resource_name, changes, replace_all, validate_only
            ),
            None,
        )

    async def alter_partition(
        self,
        broker_id: int,
        broker_epoch: int,
        topic: str,
        partition: int,
        leader_epoch: int,
        partition_epoch: int,
        new_isr: tuple[int, ...],
    ) -> AlterPartitionReply:
        return await self._run(
            lambda: self.controller.alter_partition(
                broker_id, broker_epoch, topic, partition, leader_epoch, partition_epoch, new_isr
            )
        )

    async def alter_partition_reassignments(
        self,
        wanted: Sequence[tuple[str, int, Sequence[int] | None]],
        timeout_s: float | None = None,
    ) -> list[tuple[str, int, ApiResult]]:
        return await self._admin(
            lambda: self.controller.alter_partition_reassignments(wanted), timeout_s
        )

    async def elect_leaders(
        self,
        election_type: int,
        partitions: Sequence[tuple[str, int]] | None,
        timeout_s: float | None = None,
    ) -> list[tuple[str, int, ApiResult]]:
        return await self._admin(
            lambda: self.controller.elect_leaders(election_type, partitions), timeout_s
        )
