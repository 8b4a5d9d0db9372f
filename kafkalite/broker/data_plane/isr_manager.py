"""The leader's half of ISR management: propose shrinks and expansions to the controller.

Every ``ISR_CHECK_INTERVAL_S`` each partition this broker leads is checked against the
rules in ``replication.isr`` (a follower that has not caught up for
``replica.lag.time.max.ms`` leaves; one that reached the high watermark and caught up
recently rejoins). A change
is sent as AlterPartition with the partition epoch it was computed from, so the controller
rejects it if anything changed meanwhile, and takes effect only once committed, when the
new registration is replayed here like any other metadata (Kafka's ``AlterPartitionManager``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING

from kafkalite.broker.control_plane_api import AlterPartitionChannel, NotControllerError
from kafkalite.events import EventSink, EventType
from kafkalite.metadata.image import MetadataImage
from kafkalite.network.client import PeerUnavailableError
from kafkalite.replication.isr import caught_up_replicas, out_of_sync_replicas
from kafkalite.replication.partition import Partition
from kafkalite.supervision import Spawn
from kafkalite.ticks import sleep_until_tick
from kafkalite.topic_partition import TopicPartition

if TYPE_CHECKING:
    from kafkalite.broker.data_plane.replica_manager import ReplicaManager

log = logging.getLogger(__name__)
ISR_CHECK_INTERVAL_S = 0.1
"""How often the ISRs are checked while a replica is out of one (it may rejoin any time)
or a change is on its way. With every ISR full only a shrink can come, and Kafka looks for
one every ``replica.lag.time.max.ms`` / 2 (its ``isr-expiration`` task): so does this."""


def isr_check_period_s(
    partitions: Iterable[Partition], in_flight: Collection[TopicPartition], lag_max_ms: int
) -> float:
    """Short while a led ISR lacks a replica (it may rejoin any time) or a change is on its
    way; else ``replica.lag.time.max.ms`` / 2, when only a shrink can come."""
    if in_flight or any(p.is_leader and len(p.isr) < len(p.replicas) for p in partitions):
        return ISR_CHECK_INTERVAL_S
    return max(ISR_CHECK_INTERVAL_S, lag_max_ms / 2000)


def proposed_isr(
    partition: Partition, now_ms: int, lag_max_ms: int, eligible: Callable[[int], bool]
) -> tuple[int, ...]:
    """The ISR the leader would like, in replica order (the leader always stays). Only
    ``eligible`` (live, unfenced) brokers may join (Kafka's ``isReplicaIsrEligible``): a
    follower that died caught up still looks caught up, and the controller would refuse
    it again and again."""
    others = [r for r in partition.isr if r != partition.local_broker_id]
    leaving = set(out_of_sync_replicas(others, partition.followers, now_ms, lag_max_ms))
    joining = {
        r
        for r in caught_up_replicas(
            partition.isr, partition.followers, partition.high_watermark, now_ms, lag_max_ms
        )
        if eligible(r)
    }
    members = (set(partition.isr) - leaving) | joining | {partition.local_broker_id}
    return tuple(r for r in partition.replicas if r in members)


class IsrManager:
    """Proposes the ISR changes of the partitions this broker leads (``replicas``) through
    ``controller``, as broker ``broker_id`` in its current ``broker_epoch()``."""

    def __init__(
        self,
        broker_id: int,
        broker_epoch: Callable[[], int],
        replicas: ReplicaManager,
        image: MetadataImage,
        controller: AlterPartitionChannel,
        emit: EventSink,
        now_ms: Callable[[], int],
        spawn: Spawn,
    ) -> None:
        self.broker_id = broker_id
        self.broker_epoch = broker_epoch
        self.replicas = replicas
        self.image = image
        self.controller = controller
        self.emit = emit
        self.now_ms = now_ms
        self.spawn = spawn
        self._in_flight: set[TopicPartition] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._loop: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._loop = self.spawn(self._run(), "isr-check")

    async def stop(self) -> None:
        tasks = [*self._tasks, *([self._loop] if self._loop else [])]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        while True:
            lag_max_ms = self.image.broker_int("replica.lag.time.max.ms")
            partitions = self.replicas.partitions.values()
            await sleep_until_tick(isr_check_period_s(partitions, self._in_flight, lag_max_ms))
            lag_max_ms = self.image.broker_int("replica.lag.time.max.ms")
            now = self.now_ms()
            for key, partition in list(self.replicas.partitions.items()):
                if not partition.is_leader or key in self._in_flight:
                    continue
                partition.credit_waiting_followers(now)
                wanted = proposed_isr(partition, now, lag_max_ms, self.replicas.is_broker_alive)
                if wanted != partition.isr:
                    self._in_flight.add(key)
                    task = asyncio.create_task(self._propose(key, partition, wanted))
                    self._tasks.add(task)
                    task.add_done_callback(self._tasks.discard)

    async def _propose(
        self, key: TopicPartition, partition: Partition, wanted: tuple[int, ...]
    ) -> None:
        topic, index = key
        topic_id = self.image.topic_ids.get(topic)
        partition.pending_isr = wanted
        try:
            if topic_id is None:
                return
            reply = await self.controller.alter_partition(
                self.broker_id,
                self.broker_epoch(),
                topic,
                topic_id,
                index,
                partition.leader_epoch,
                partition.partition_epoch,
                wanted,
            )
            if reply.error:
                log.info("AlterPartition %s-%d %s: %s", topic, index, wanted, reply.error.name)
                self.emit(
                    EventType.REQUEST_FENCED,
                    api="AlterPartition",
                    topic=topic,
                    partition=index,
                    proposed_isr=list(wanted),
                    error=reply.error.name,
                )
                return
            await self.controller.barrier()  # the change is replayed here first
        except (NotControllerError, PeerUnavailableError) as exc:
            log.info("AlterPartition %s-%d not sent: %s", topic, index, exc)
        finally:
            self._in_flight.discard(key)
            if partition.pending_isr == wanted:  # not already cleared by a new epoch
                partition.pending_isr = ()
                if partition.maybe_increment_leader_hw():  # a refused joiner held it
                    self.replicas.produce_waiters.notify(key)
                    self.replicas.fetch_waiters.notify(key)
