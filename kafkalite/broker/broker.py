"""The broker: where storage, metadata, the controller and the network meet.

This is the composition root. It owns the long-lived objects and wires them: committed
metadata records flow from the quorum into the metadata image and then into the replica
manager, which makes the local logs match. Request handlers get the components they use
from ``broker.apis``, never the ``Broker`` itself.

Two event loops: the main loop serves clients and replication; the control plane
(``control_plane``: the quorum, the controller, the controller listener, heartbeats) runs
on its own loop in a second thread, so client work can never starve it. The quorum hands
committed records to the main loop in order, where ``MetadataPublisher`` applies them
under supervision (a record that cannot be applied halts the broker); ``quorum.view`` is
what the main loop may read of it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
import uuid
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path

from kafkalite.broker.apis import broker_handlers
from kafkalite.broker.broker_state import BrokerState, BrokerStateMachine
from kafkalite.broker.control_plane.control_loop import ControlPlane
from kafkalite.broker.control_plane.controller_channel import ControllerChannel
from kafkalite.broker.control_plane.controller_service import ControllerService
from kafkalite.broker.control_plane.lifecycle import BrokerLifecycle
from kafkalite.broker.control_plane.raft_quorum import RaftQuorum
from kafkalite.broker.control_plane_api import VoterAddress, parse_voters
from kafkalite.broker.data_plane.consumer_group_settings import ImageTopics, consumer_group_config
from kafkalite.broker.data_plane.group_offsets import BrokerOffsetsTopic
from kafkalite.broker.data_plane.isr_manager import IsrManager
from kafkalite.broker.data_plane.log_cleaner import LogCleanerManager
from kafkalite.broker.data_plane.partition_events import emit_partition_change
from kafkalite.broker.data_plane.producer_ids import ProducerIdManager
from kafkalite.broker.data_plane.replica_fetcher import ReplicaFetcherManager
from kafkalite.broker.data_plane.replica_manager import ReplicaManager
from kafkalite.broker.data_plane.transaction_state import BrokerTransactionStateTopic
from kafkalite.broker.data_plane.txn_marker_channel import BrokerMarkerChannel
from kafkalite.broker.events import EventLog
from kafkalite.broker.loop_lag import LoopLagMonitor
from kafkalite.broker.metadata_publisher import MetadataPublisher
from kafkalite.broker.server import KafkaServer
from kafkalite.controller.controller_image import ControllerImage
from kafkalite.coordinator.group.coordinator import GroupCoordinator
from kafkalite.coordinator.group.group_migration import MigrationPolicy
from kafkalite.coordinator.transaction.coordinator import TransactionConfig, TransactionCoordinator
from kafkalite.events import EventType
from kafkalite.metadata.config_defs import BROKER_CONFIGS, InvalidConfigError
from kafkalite.metadata.image import MetadataImage
from kafkalite.metadata.records import (
    ConfigRecord,
    FenceBrokerRecord,
    MetadataRecord,
    PartitionChangeRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnfenceBrokerRecord,
)
from kafkalite.raft.config import RaftConfig
from kafkalite.storage.config import LogConfig
from kafkalite.storage.log_manager import LogManager
from kafkalite.supervision import TaskSupervisor
from kafkalite.ticks import sleep_until_tick

log = logging.getLogger(__name__)

CONTROLLER_PORT_OFFSET = 200
CATCH_UP_REPORT_EVERY = 300
"""Polls (10 ms each, so about every 3 s) between log lines while a start waits for the
metadata quorum: a broker that took 14 s to catch up on a loaded machine logged nothing."""


def now_ms() -> int:
    return time.time_ns() // 1_000_000


@dataclass(frozen=True, slots=True)
class BrokerConfig:
    broker_id: int
    host: str
    port: int
    admin_port: int
    data_dir: Path
    overrides: dict[str, str] = field(default_factory=dict)
    rack: str | None = None

    def static(self, name: str) -> str:
        """A setting read once at start-up: the override, else the lab default."""
        return self.overrides.get(name, BROKER_CONFIGS[name].default)

    def static_int(self, name: str) -> int:
        """A whole-number setting read once at start-up, typed by its definition."""
        return BROKER_CONFIGS[name].as_int(self.static(name))


HALT_EXIT_CODE = 70  # EX_SOFTWARE: the broker stopped itself after an internal failure


def _halt(task: str, exc: BaseException) -> None:
    """A long-lived task died (see ``kafkalite.supervision``): stop the process at once, as
    Kafka's process-terminating fault handler does, instead of serving without it. The
    logs are left as a ``kill -9`` leaves them; start-up recovery is made for that."""
    log.critical("halting: task %r died of %r", task, exc)
    logging.shutdown()
    os._exit(HALT_EXIT_CODE)


class Broker:
    """One Kafka-Lite broker process: the main loop, plus the control plane's thread."""

    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self.broker_id = config.broker_id
        self.now_ms = now_ms
        self.cluster_id = _cluster_id(config.data_dir)
        self.state = BrokerStateMachine()
        self.events = EventLog(
            config.broker_id, now_ms, replaying=lambda: self.state.replaying_metadata
        )
        self.supervisor = TaskSupervisor(_halt)
        self.image = MetadataImage()
        self.logs = LogManager(config.data_dir / "logs", LogConfig(), now_ms)
        self.replica_manager = ReplicaManager(
            config.broker_id, self.logs, self.image, self.events, now_ms
        )
        self.applied_end_offset = 0
        """How far the main loop's image has replayed the metadata log (exclusive)."""
        self.control_plane = ControlPlane(
            f"broker-{config.broker_id}-control", self.supervisor.spawn
        )
        self.loop_lag = LoopLagMonitor()
        voters = self.voters
        controller_images = ControllerImage()
        """The controller's own images, replayed on the control plane: it decides against
        them and snapshots the committed one, never the main loop's image."""
        self.quorum = self._make_quorum(voters, controller_images)
        self.metadata_publisher = self._publish_committed_metadata()
        self.controller = self._make_controller(voters, controller_images)
        self.lifecycle = BrokerLifecycle(
            config.broker_id,
            self.advertised,
            config.rack,
            self.controller,
            self.control_plane,
            self.supervisor.spawn,
            lambda: self.applied_end_offset,
        )
        self.log_cleaner = LogCleanerManager(self.replica_manager, self.image, self.events, now_ms)
        self.fetchers = self._make_fetchers()
        self.isr_manager = self._make_isr_manager()
        self.producer_ids = ProducerIdManager(
            lambda: self.controller.allocate_producer_ids(self.broker_id, self.broker_epoch)
        )
        self.group_offsets = BrokerOffsetsTopic(
            self.image, self.replica_manager, self.controller, cluster_size=len(voters)
        )
        self.group_coordinator = self._make_group_coordinator()
        self.txn_state_topic = BrokerTransactionStateTopic(
            self.image, self.replica_manager, self.controller, cluster_size=len(voters)
        )
        self.txn_markers = BrokerMarkerChannel(config.broker_id, self.image, self.fetchers.endpoint)
        self.txn_coordinator = self._make_txn_coordinator()
        self.server, self.controller_server = self._make_servers()
        self._tasks: list[asyncio.Task[None]] = []
        self._stopped = asyncio.Event()

    # ---- factories: each part, built from the parts made before it --------------------

    def _make_quorum(
        self, voters: dict[int, VoterAddress], controller_images: ControllerImage
    ) -> RaftQuorum:
        """The metadata quorum, feeding what it commits to the controller's images."""
        quorum = RaftQuorum(
            self.broker_id,
            voters,
            self.config.data_dir / "metadata",
            RaftConfig.from_properties(self.config.overrides),
            self.cluster_id,
            self.events.emit,
            controller_images.committed.to_records,
            self.config.static_int("metadata.log.max.record.bytes.between.snapshots"),
        )
        quorum.register(controller_images.replay_committed)
        quorum.on_snapshot(controller_images.load_snapshot)
        return quorum

    def _publish_committed_metadata(self) -> MetadataPublisher:
        """The one hand-off of metadata from the control plane to the main loop: committed
        records, snapshots and the applied offset, in commit order."""
        publisher = MetadataPublisher(self.control_plane.to_main, self.supervisor.on_death)
        publish = publisher.publish
        self.quorum.register(lambda offset, records: publish(self._on_commit, offset, records))
        self.quorum.on_snapshot(lambda offset, records: publish(self._on_snapshot, offset, records))
        self.quorum.on_applied(lambda end: publish(self._on_applied, end))
        return publisher

    def _make_controller(
        self, voters: dict[int, VoterAddress], controller_images: ControllerImage
    ) -> ControllerChannel:
        """The way to the active controller: in-process when this broker leads the quorum."""
        service = ControllerService(
            self.quorum,
            controller_images,
            self.quorum.clock.now,
            self.supervisor.spawn,
            self.events.emit,
        )
        return ControllerChannel(
            self.broker_id,
            self.quorum,
            service,
            voters,
            self.control_plane,
            lambda: self.applied_end_offset,
        )

    def _make_fetchers(self) -> ReplicaFetcherManager:
        return ReplicaFetcherManager(
            self.broker_id,
            self.replica_manager,
            self.image,
            self.events.emit,
            self.supervisor.spawn,
            self.config.static_int("request.timeout.ms"),
            self.config.overrides.get("replica.fetch.endpoints", ""),
        )

    def _make_isr_manager(self) -> IsrManager:
        return IsrManager(
            self.broker_id,
            lambda: self.broker_epoch,
            self.replica_manager,
            self.image,
            self.controller,
            self.events.emit,
            now_ms,
            self.supervisor.spawn,
        )

    def _make_group_coordinator(self) -> GroupCoordinator:
        """Group settings are read from the image when used: a changed one takes effect."""
        image = self.image
        return GroupCoordinator(
            self.group_offsets,
            now_ms,
            self.events.emit,
            lambda: image.broker_int("group.min.session.timeout.ms"),
            lambda: image.broker_int("group.max.session.timeout.ms"),
            lambda: image.broker_int("group.initial.rebalance.delay.ms"),
            topics=ImageTopics(image),
            consumer_config=consumer_group_config(
                image, MigrationPolicy(self.config.static("group.consumer.migration.policy"))
            ),
        )

    def _make_txn_coordinator(self) -> TransactionCoordinator:
        image = self.image
        return TransactionCoordinator(
            self.txn_state_topic,
            self.txn_markers,
            self.producer_ids.next_id,
            now_ms,
            self.events.emit,
            TransactionConfig(
                lambda: image.broker_int("transaction.max.timeout.ms"),
                lambda: image.broker_int(
                    "transaction.abort.timed.out.transaction.cleanup.interval.ms"
                ),
            ),
        )

    def _make_servers(self) -> tuple[KafkaServer, KafkaServer]:
        """The client listener (main loop) and the controller listener (control plane;
        forwarded admin requests it serves run on the main loop)."""
        max_request_bytes = self.config.static_int("socket.request.max.bytes")
        client_handlers, controller_handlers = broker_handlers(self)
        client = KafkaServer(max_request_bytes, client_handlers, forward_to=self.controller)
        controller = KafkaServer(
            max_request_bytes,
            controller_handlers,
            concurrent=True,
            run_on_main=self.control_plane.run_on_main,
        )
        return client, controller

    @property
    def advertised(self) -> tuple[str, int]:
        """The address clients are told to use: ``advertised.listeners`` or the listener."""
        listeners = self.config.overrides.get("advertised.listeners")
        return advertised_address(listeners) if listeners else (self.config.host, self.config.port)

    @property
    def controller_port(self) -> int:
        """``controller.listener.port``, by default the client port + 200."""
        port = self.config.static_int("controller.listener.port")
        return port or self.config.port + CONTROLLER_PORT_OFFSET

    @property
    def voters(self) -> dict[int, VoterAddress]:
        """``controller.quorum.voters``; empty means a quorum of this broker alone."""
        value = self.config.overrides.get("controller.quorum.voters", "")
        if value:
            return parse_voters(value)
        return {
            self.broker_id: VoterAddress(self.broker_id, self.config.host, self.controller_port)
        }

    @property
    def broker_epoch(self) -> int:
        """This broker's epoch with the controller, -1 until registered."""
        return self.lifecycle.broker_epoch

    async def start(self) -> None:
        self.state.move_to(BrokerState.STARTING)
        self.control_plane.start()
        self._tasks.append(self.supervisor.spawn(self.loop_lag.run(), "loop-lag"))
        caught_up = await self.control_plane.run(self._start_control_plane())
        while self.applied_end_offset < caught_up:
            await asyncio.sleep(0.01)  # the records handed over are being replayed here
        # the replayed records built the image only: local logs follow the final image at
        # once, so a topic deleted and created again under its name keeps its new log
        self.replica_manager.reconcile()
        self.state.move_to(BrokerState.RECOVERY)
        await self.lifecycle.register()
        self.lifecycle.start()  # heartbeats from now on: the session starts at registration
        await self._apply_static_overrides()
        await self.server.start(self.config.host, self.config.port)
        self._tasks.append(self.supervisor.spawn(self._retention_loop(), "retention"))
        self._tasks.append(self.supervisor.spawn(self._checkpoint_loop(), "recovery-point"))
        self._tasks.append(self.supervisor.spawn(self.log_cleaner.run(), "log-cleaner"))
        self.group_coordinator.start(self.supervisor.spawn)
        self.txn_coordinator.start(self.supervisor.spawn)
        self.isr_manager.start()
        self.fetchers.schedule_sync()
        self.state.move_to(BrokerState.RUNNING)
        self.events.emit(EventType.BROKER_STARTED, broker_epoch=self.broker_epoch)

    async def _start_control_plane(self) -> int:
        """On the control loop: listen for peers, join the quorum, and return the offset
        up to which this broker has caught up with it."""
        await self.controller_server.start(self.config.host, self.controller_port)
        self.quorum.start(self.supervisor.spawn)
        waited = 0
        while not self.quorum.is_caught_up():
            await asyncio.sleep(0.01)
            waited += 1
            if waited % CATCH_UP_REPORT_EVERY == 0:  # a start that takes long says why
                log.info("catching up with the metadata quorum: %s", self.quorum.catch_up_report())
        return self.quorum.applied_end_offset

    async def _apply_static_overrides(self) -> None:
        """``--config k=v`` at start-up become cluster-wide dynamic defaults, if changed."""
        dynamic = {
            k: v
            for k, v in self.config.overrides.items()
            if not BROKER_CONFIGS[k].read_only and self.image.broker_config(k) != v
        }
        if dynamic:
            result = await self.controller.alter_configs("broker", "", dict(dynamic), False)
            if result.message:
                raise ValueError(result.message)

    async def _checkpoint_loop(self) -> None:
        """Write each log's recovery point as its closed segments' fsyncs complete. On the
        shared grid of ``kafkalite.ticks``, as the retention check is: an idle broker wakes
        once for every check that falls due together."""
        while True:
            interval = self.image.broker_int("log.flush.offset.checkpoint.interval.ms")
            await sleep_until_tick(interval / 1000)
            self.logs.checkpoint_recovery_points()  # a failed fsync stops the broker

    async def _retention_loop(self) -> None:
        while True:
            interval = self.image.broker_int("log.retention.check.interval.ms")
            await sleep_until_tick(interval / 1000)
            self.replica_manager.enforce_retention()  # a disk error stops the broker

    def _on_applied(self, end_offset: int) -> None:
        """Everything below ``end_offset`` is replayed here: tell the controller."""
        self.applied_end_offset = end_offset
        self.lifecycle.metadata_replayed()

    def _on_snapshot(self, offset: int, records: list[MetadataRecord]) -> None:
        """A snapshot replaces the image: replay it into a fresh one, then reconcile."""
        self.image.reload(offset, records)
        if not self.state.replaying_metadata:  # a starting broker reconciles once, caught up
            self.replica_manager.reconcile()
            self.fetchers.schedule_sync()
        self._leaderships_changed()
        self.events.emit(EventType.METADATA_SNAPSHOT_LOADED, offset=offset, records=len(records))

    def _leaderships_changed(self) -> None:
        """The coordinators load what this broker has come to lead, and drop what it no
        longer leads, now rather than at their next idle check."""
        self.group_coordinator.wake()
        self.txn_coordinator.wake()

    def _on_commit(self, offset: int, records: list[MetadataRecord]) -> None:
        """Replay a committed entry's records, in one turn of the main loop.

        One turn, not one per record: the controller writes a decision as one entry (a
        fenced broker and a new leader for each partition it led), and a client request
        served between its records saw half of it. Worse, that half was kept: Metadata
        answers are cached until the image's offset moves, and every record of an entry
        has the entry's offset, so a partition answered "no leader" (the broker fenced,
        its election not yet applied) stayed so until the next entry, 42 s in lab 08's
        failed run, while the new leader was serving."""
        for record in records:
            try:
                self._apply_committed(offset, record)
            except Exception as exc:
                exc.add_note(f"applying {record!r}")  # the publisher's log names the entry only
                raise

    def _apply_committed(self, offset: int, record: MetadataRecord) -> None:
        """Replay a committed record, then bring local state in line with it."""
        removed = None
        before = None
        if isinstance(record, RemoveTopicRecord):
            topic = self.image.topics_by_id.get(record.topic_id)
            removed = topic.name if topic else None
        if isinstance(record, PartitionChangeRecord):
            before = self.image.topics_by_id[record.topic_id].partitions[record.partition]
        self.image.replay(record, offset)
        match record:
            case PartitionRecord() | PartitionChangeRecord():
                topic = self.image.topics_by_id[record.topic_id]
                after = topic.partitions[record.partition]
                if not self.state.replaying_metadata:
                    self.replica_manager.apply_partition(
                        topic.name, record.partition, after, topic.topic_id
                    )
                if isinstance(record, PartitionChangeRecord) and before is not None:
                    emit_partition_change(
                        self.events.emit, self.broker_id, topic.name, record, before, after
                    )
                self.fetchers.schedule_sync()
                self._leaderships_changed()
            case TopicRecord():
                self.events.emit(
                    EventType.TOPIC_CREATED, topic=record.name, topic_id=record.topic_id
                )
            case FenceBrokerRecord():
                self.events.emit(EventType.BROKER_FENCED, broker_id=record.broker_id)
            case UnfenceBrokerRecord():
                self.events.emit(EventType.BROKER_UNFENCED, broker_id=record.broker_id)
            case RemoveTopicRecord() if removed is not None:
                if not self.state.replaying_metadata:
                    self.replica_manager.remove_topic(removed)
                self.group_coordinator.on_topic_deleted(removed)
                self.events.emit(EventType.TOPIC_DELETED, topic=removed)
            case ConfigRecord():
                self._apply_config(record)
            case _:
                pass

    def _apply_config(self, record: ConfigRecord) -> None:
        """A setting changed: logs pick up topic and broker settings (groups' are read
        when used)."""
        if record.resource_type == "topic":
            self.replica_manager.update_topic_config(record.resource_name)
        elif record.resource_type == "broker":
            self.replica_manager.update_all_configs()
        self.events.emit(
            EventType.CONFIG_CHANGED,
            resource=f"{record.resource_type}:{record.resource_name}",
            name=record.name,
            value=record.value,
        )

    async def serve_forever(self) -> None:
        await self._stopped.wait()

    def request_stop(self) -> None:
        self._stopped.set()

    async def stop(self) -> None:
        """Controlled shutdown: hand leadership to other replicas, stop taking requests,
        resign from the quorum so another voter leads at once, and close every log cleanly.

        Every step is bounded: a step that cannot finish (a peer that does not answer, a
        request still waiting for acks) is logged and cancelled, so a stop ends within a
        few seconds and the supervisor never has to kill the process. The
        shutdown heartbeat is skipped when no quorum could commit it: with the other voters
        gone, waiting would only delay the exit.
        """
        await _bounded("heartbeats", self.lifecycle.stop(), 0.5)
        await _bounded("background tasks", self._cancel_tasks(), 0.5)
        if self.broker_epoch >= 0 and await self.control_plane.run(self._quorum_reachable()):
            self.state.move_to(BrokerState.PENDING_CONTROLLED_SHUTDOWN)
            await _bounded("controlled shutdown", self.lifecycle.shut_down(), 1.5)
        elif self.broker_epoch >= 0:
            log.info("controlled shutdown skipped: no quorum of controllers can answer")
        self.state.move_to(BrokerState.SHUTTING_DOWN)
        await _bounded("client listener", self.server.stop(), 1.0)
        await _bounded("group coordinator", self.group_coordinator.stop(), 0.5)
        await _bounded("transaction coordinator", self.txn_coordinator.stop(), 0.5)
        await _bounded("transaction markers", self.txn_markers.close(), 0.5)
        await _bounded("ISR manager", self.isr_manager.stop(), 0.5)
        # the control plane stops before the logs close: the records it commits meanwhile
        # (the controlled shutdown's leader changes) are replayed here, into logs and
        # fetchers, and must not come after them; ``sleep(0)`` replays the last ones
        await _bounded("control plane", self.control_plane.run(self._stop_control_plane()), 2.5)
        await self.control_plane.stop()
        await asyncio.sleep(0)
        if await _bounded("replica fetchers", self.fetchers.stop(), 1.0):
            self.replica_manager.close()
        else:  # a fetcher may still write: leave the logs to start-up recovery
            log.warning("shutdown: logs left open for recovery at the next start")

    async def _cancel_tasks(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _quorum_reachable(self) -> bool:
        return self.quorum.in_contact_with_majority()

    async def _stop_control_plane(self) -> None:
        """On the control loop: the controller, its connections, the quorum (resigning
        if it leads), then the controller listener, each bounded."""
        await _bounded("controller", self.controller.service.stop(), 0.5)
        await _bounded("controller channel", self.controller.close(), 0.5)
        await _bounded("metadata quorum", self.quorum.stop(), 1.0)
        await _bounded("controller listener", self.controller_server.stop(), 0.5)


async def _bounded(step: str, work: Awaitable[None], timeout_s: float) -> bool:
    """Run one shutdown step for at most ``timeout_s``; past that, cancel it and go on.
    Returns whether it finished.

    ``asyncio.wait`` (not ``asyncio.timeout``) bounds the wait even for a step that does
    not end promptly once cancelled."""
    task = asyncio.ensure_future(work)
    started = time.monotonic()
    done, _ = await asyncio.wait({task}, timeout=timeout_s)
    if time.monotonic() - started > timeout_s / 2:
        log.info("shutdown: %s took %.2f s", step, time.monotonic() - started)
    if not done:
        task.cancel()
        log.warning("shutdown: %s did not finish within %.1f s; going on", step, timeout_s)
        return False
    if not task.cancelled() and task.exception() is not None:
        log.warning("shutdown: %s failed: %r", step, task.exception())
    return True


def advertised_address(listeners: str) -> tuple[str, int]:
    """``PLAINTEXT://host:port`` -> ``(host, port)``; only the PLAINTEXT listener exists."""
    scheme, sep, rest = listeners.partition("://")
    host, colon, port = rest.rpartition(":")
    if scheme != "PLAINTEXT" or not sep or not colon or not port.isdigit():
        raise InvalidConfigError(
            "advertised.listeners", listeners, "expected PLAINTEXT://host:port"
        )
    return host, int(port)


def _cluster_id(data_dir: Path) -> str:
    """Kafka keeps the cluster id in ``meta.properties``; so do we."""
    data_dir.mkdir(parents=True, exist_ok=True)
    meta = data_dir / "meta.properties"
    if meta.exists():
        for line in meta.read_text().splitlines():
            if line.startswith("cluster.id="):
                return line.split("=", 1)[1]
    cluster_id = uuid.uuid4().hex[:22]
    meta.write_text(f"version=1\ncluster.id={cluster_id}\n")
    return cluster_id
