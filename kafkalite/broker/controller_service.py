"""The active controller: the quorum leader's state machine, one operation at a time.

Serialising operations is what makes validation sound: two CreateTopics for one name
cannot both pass, because the second is checked against an image that already holds the
first (each operation waits for its records to commit and be replayed before the next is
validated). Kafka's controller gets the same guarantee from its single event-queue thread.

Only the node whose quorum is active runs operations; anywhere else they raise
``NotControllerError`` and the caller (``ControllerChannel``) sends them to the leader.
While active it also watches heartbeats, fences brokers that went silent, and moves
leadership back to preferred replicas.

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
from collections.abc import Callable, Sequence
from functools import partial
from typing import TypeVar

from kafkalite.broker.raft_quorum import STALL_SETTLE_PASSES, NotControllerError, RaftQuorum
from kafkalite.controller.cluster_control import HeartbeatReply
from kafkalite.controller.heartbeats import BrokerHeartbeats, Contact
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

STALL_TOLERANCE_MS = 100
"""A fence check this late (or later) means the controller itself was stalled."""
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
        controller: QuorumController,
        now_ms: Callable[[], int],
        spawn: Spawn,
        emit: EventSink,
        loop_lag_ms: Callable[[], int] = lambda: 0,
        run_queue_per_cpu: Callable[[], float] = lambda: 0.0,
    ) -> None:
        """``emit``: where a fence's reason goes (``broker_session_expired``);
        ``loop_lag_ms``: how late this (the control plane's) loop has run lately;
        ``run_queue_per_cpu``: how crowded the machine's CPUs have been lately."""
        self.emit = emit
        self.quorum = quorum
        self.loop_lag_ms = loop_lag_ms
        self.run_queue_per_cpu = run_queue_per_cpu
        self.spawn = spawn
        self.controller = controller
        self.image = controller.image
        self.now_ms = now_ms
        self.heartbeats = BrokerHeartbeats(self._session_timeout_ms(), self._contact_intervals_ms())
        self._heard = asyncio.Event()
        """Set (and replaced) on every heartbeat: what propagation waits on."""
        self._contact = asyncio.Event()
        """Set on every contact (heartbeat or quorum request): the fence check's deadline moved."""
        self._lock = asyncio.Lock()
        self._tasks: list[asyncio.Task[None]] = []
        self.session_ms: int | None = None
        """The session silence is judged by now, stretched or not (``/state``), while
        this controller is active; replaced whole, read from any thread."""
        self.longest_silence_ms: int | None = None
        """The longest silence of a live broker in the last minute (``/state``), beside
        ``session_ms``: how close one came to being fenced."""
        quorum.on_activation(self._on_activation)
        quorum.on_request_from(self._heard_from_voter)

    def _session_timeout_ms(self) -> int:
        return self.image.broker_int("broker.session.timeout.ms")

    def _contact_intervals_ms(self) -> dict[Contact, int]:
        """How often each periodic contact comes on a quiet machine: every broker is a
        voter here, and its quorum Fetch is parked at most ``fetch_max_wait_ms``."""
        return {
            Contact.HEARTBEAT: self.image.broker_int("broker.heartbeat.interval.ms"),
            Contact.QUORUM_FETCH: self.quorum.config.fetch_max_wait_ms,
        }

    async def _run(self, operation: Callable[[], ControllerResult[T]]) -> T:
        response, _ = await self._commit(operation)
        return response

    async def _commit(self, operation: Callable[[], ControllerResult[T]]) -> tuple[T, int]:
        """One operation at a time: decided against the image, its records appended and
        applied before the next is decided; returns its response and the offset of its
        records (-1 if it wrote none). The lock is held until they are applied even if the
        caller is cancelled meanwhile (its client went away): released earlier, the next
        operation would be decided against an image without them - two CreateTopics of one
        name would both succeed, with two topic ids."""
        async with self._lock:
            if not self.quorum.is_active:
                raise NotControllerError(self.quorum.leader_id)
            result = operation()
            offset = -1
            if result.records:
                offset = await _even_if_cancelled(
                    asyncio.ensure_future(self.quorum.append(result.records))
                )
            return result.response, offset

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
        for task in self._tasks:
            task.cancel()
        self._tasks = []
        self.session_ms = self.longest_silence_ms = None
        if active:
            self.heartbeats.reset(self.image.brokers, self.now_ms(), self.quorum.view.gone_voters)
            self._tasks = [
                self.spawn(self._fence_loop(), "fence-check"),
                self.spawn(self._rebalance_loop(), "leader-rebalance"),
            ]

    def _heard_from_voter(self, node_id: int, request: m.Message) -> None:
        """Every broker here is also a voter of the metadata quorum (combined mode), and a
        voter's Fetch reaches the active controller from the same process and over the same
        link as its heartbeats, every ``controller.quorum.fetch.max.wait.ms`` or sooner:
        it counts as contact, as a heartbeat does. Kafka judges a broker's session by its
        heartbeats alone; here that would need one every 150 ms to fence a dead broker
        within ``broker.session.timeout.ms`` on a busy machine, and those round trips were
        most of an idle cluster's CPU. The heartbeats still carry everything else (the
        replayed metadata offset, fencing and shutdown requests), at once when it changes.

        Any other request from a voter counts too. On a starved machine a voter's Fetch can
        time out (``controller.quorum.fetch.timeout.ms``); the voter then asks the others
        for pre-votes instead of fetching, and this controller hears those at once. Only
        Fetches counted, that gap was silence, and a live broker was fenced for it."""
        if self.quorum.is_active:
            kind = (
                Contact.QUORUM_FETCH if isinstance(request, m.FetchRequest) else Contact.QUORUM_VOTE
            )
            self.heartbeats.touch(node_id, self.now_ms(), kind=kind)
            self._contact.set()

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _fence_loop(self) -> None:
        """Fence brokers whose session ran out. Wakes when the first session would run
        out (not on a fixed tick), and looks again at every contact, which moves that
        moment on: an idle controller's process then wakes for a session that really
        runs out, not every few hundred ms to find that none has (a contact comes with a
        request the loop is awake for anyway). A wake-up that comes late means this
        controller was stalled, and the stall counts against no broker."""
        while True:
            self.heartbeats.session_timeout_ms = self._session_timeout_ms()
            self.heartbeats.intervals_ms = self._contact_intervals_ms()
            self.heartbeats.controller_lag_ms = self.loop_lag_ms()
            self.heartbeats.run_queue_per_cpu = self.run_queue_per_cpu()
            now = self.now_ms()
            self.session_ms = self.heartbeats.effective_timeout_ms(now)
            self.longest_silence_ms = self.heartbeats.longest_silence_ms(now)
            unfenced = [b.broker_id for b in self.image.live_brokers()]
            for broker_id in self.heartbeats.expired(unfenced, now, self.quorum.node_id):
                try:
                    fenced = await self._run(partial(self._fence_if_silent, broker_id))
                except NotControllerError:
                    return
                if fenced is not None:
                    silences, session_ms = fenced
                    self.emit(
                        EventType.BROKER_SESSION_EXPIRED,
                        broker_id=broker_id,
                        silent_ms=silences[broker_id],
                        session_ms=session_ms,
                    )
                    log.info(
                        "fenced broker %d: silent for %d ms (session %d ms; the others' "
                        "last contact, ms ago: %s)",
                        broker_id,
                        silences.pop(broker_id),
                        session_ms,
                        silences,
                    )
            expiry = self.heartbeats.next_expiry_ms(unfenced, now, self.quorum.node_id)
            wake_ms = max(expiry + 1, now + 10)
            self._contact.clear()
            try:
                async with asyncio.timeout((wake_ms - now) / 1000):
                    await self._contact.wait()
                continue
            except TimeoutError:
                pass
            late_ms = self.now_ms() - wake_ms - STALL_TOLERANCE_MS
            if late_ms > 0:
                self.heartbeats.forgive(late_ms, self.now_ms())
            # A contact read from its socket in the loop pass that ended this wait reaches
            # ``heartbeats`` a few passes later (framing, then its handler): let it count
            # before the sessions are judged. Under load a pass can take a long time, and
            # a broker whose heartbeat was already here was fenced for it.
            for _ in range(STALL_SETTLE_PASSES):
                await asyncio.sleep(0)

    def _fence_if_silent(
        self, broker_id: int
    ) -> ControllerResult[tuple[dict[int, int], int] | None]:
        """Fence the broker if it is still live and silent for longer than its session
        when this operation runs; its response is then every live broker's silence and
        the session, in ms. Judged again here, not only when the fence check saw the
        session run out: operations run one at a time, and under load (a flood of
        AlterPartition from the leader elections of a busy cluster) this one waited
        seconds for its turn while the broker's heartbeats kept arriving, and a live
        broker was fenced."""
        now = self.now_ms()
        live = [b.broker_id for b in self.image.live_brokers()]
        if broker_id not in live or not self.heartbeats.expired(
            [broker_id], now, self.quorum.node_id
        ):
            return ControllerResult([], None)
        silences = {b: self.heartbeats.silent_ms(b, now) for b in live}
        session_ms = self.heartbeats.effective_timeout_ms(now)
        records = self.controller.fence_broker(broker_id).records
        return ControllerResult(records, (silences, session_ms))

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
    async def register_broker(
        self, broker_id: int, host: str, port: int, rack: str | None, incarnation_id: str
    ) -> int:
        """The broker epoch is the offset its registration entry gets: the log end now,
        as operations are serialised."""
        self.heartbeats.registered(broker_id, self.now_ms())
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
        self.heartbeats.touch(broker_id, self.now_ms(), metadata_offset)
        self._contact.set()
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


async def _even_if_cancelled(task: asyncio.Future[T]) -> T:
    """Wait for ``task`` to end even if the caller is cancelled meanwhile; then re-raise
    the cancellation."""
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            cancelled = cancelled or not task.done()
    if cancelled:
        raise asyncio.CancelledError
    return task.result()
