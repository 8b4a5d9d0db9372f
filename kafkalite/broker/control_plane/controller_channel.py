"""``ControllerChannel``: how a broker reaches the active controller, wherever it runs.

On the quorum leader an operation runs in-process; anywhere else it becomes the Kafka
request Kafka's own brokers send to their controller (BrokerRegistration, BrokerHeartbeat,
AllocateProducerIds, AlterPartition, CreateTopics, IncrementalAlterConfigs) on the
leader's controller listener. Client admin requests are forwarded as they came (``forward``).

Every call retries for a while when there is no leader (an election is under way) or the
leader changed: a student who kills the controller sees a pause, not an error.

Calls may be made from any of the broker's loops; each runs on the loop that owns the
quorum and the controller (``ControlLoop``, the broker's control plane), so the channel's
connections and the controller are only ever touched from there.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, Protocol, TypeVar

from kio.schema.allocate_producer_ids.v0 import request as alloc_req
from kio.schema.alter_partition.v2 import request as alter_req
from kio.schema.broker_heartbeat.v0 import request as heartbeat_req
from kio.schema.broker_registration.v0 import request as register_req
from kio.schema.create_topics.v5 import request as create_req
from kio.schema.describe_quorum.v0 import request as quorum_req
from kio.schema.incremental_alter_configs.v1 import request as configs_req

from kafkalite.broker.control_plane.controller_service import ControllerService
from kafkalite.broker.control_plane.raft_quorum import RaftQuorum
from kafkalite.broker.control_plane_api import (
    BROKER_CLIENT_ID_PREFIX,
    CALL_TIMEOUT_S,
    ControllerRequestError,
    NotControllerError,
    ServeLocallyError,
    VoterAddress,
)
from kafkalite.controller.cluster_control import HeartbeatReply
from kafkalite.controller.replication_control import AlterPartitionReply
from kafkalite.controller.results import ApiResult
from kafkalite.controller.topic_control import CreatableTopic, CreatedTopic
from kafkalite.metadata.image import PartitionRegistration
from kafkalite.network.client import PeerConnection, PeerUnavailableError
from kafkalite.protocol.codec import build
from kafkalite.protocol.errors import ErrorCode
from kafkalite.protocol.framing import ReceivedFrame
from kafkalite.raft.wire import METADATA_TOPIC

T = TypeVar("T")

RETRY_BACKOFF_S = 0.05
REQUEST_TIMEOUT_S = 5.0
RESOURCE_TYPES = {"topic": 2, "broker": 4, "group": 32}


class NotControllerReply(Exception):
    """The peer answered NOT_CONTROLLER: leadership moved; try again."""


class ControlLoop(Protocol):
    """The loop that owns the quorum and the controller."""

    async def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` there and await it from the caller's loop."""
        ...


class ControllerChannel:
    def __init__(
        self,
        node_id: int,
        quorum: RaftQuorum,
        service: ControllerService,
        voters: dict[int, VoterAddress],
        control: ControlLoop,
        applied_end_offset: Callable[[], int],
    ) -> None:
        """``applied_end_offset`` is how far this broker's own metadata image has replayed
        the log (``barrier`` waits for it)."""
        self.node_id = node_id
        self.quorum = quorum
        self.service = service
        self._control = control
        self._applied_end_offset = applied_end_offset
        self._peers = {
            v.node_id: PeerConnection(v.host, v.port, f"{BROKER_CLIENT_ID_PREFIX}{node_id}")
            for v in voters.values()
            if v.node_id != node_id
        }

    async def close(self) -> None:
        for peer in self._peers.values():
            await peer.close()

    async def _call(
        self,
        local: Callable[[], Awaitable[T]],
        remote: Callable[[PeerConnection], Awaitable[T]] | None,
        timeout_s: float = CALL_TIMEOUT_S,
    ) -> T:
        """Run ``local`` if this broker is the active controller, else ``remote`` on the
        leader's connection, retrying until ``timeout_s``; always on the control loop."""
        return await self._control.run(self._call_leader(local, remote, timeout_s))

    async def _call_leader(
        self,
        local: Callable[[], Awaitable[T]],
        remote: Callable[[PeerConnection], Awaitable[T]] | None,
        timeout_s: float,
    ) -> T:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            leader = self.quorum.leader_id
            try:
                if self.quorum.is_active:
                    return await local()
                peer = self._peers.get(leader)
                if remote is not None and peer is not None:
                    # bounded by the call's own deadline: a controller that went silent
                    # (isolated, paused) must not hold up, say, the next heartbeat
                    remaining = max(deadline - loop.time(), 0.01)
                    async with asyncio.timeout(remaining):
                        return await remote(peer)
            except (NotControllerError, NotControllerReply, PeerUnavailableError, TimeoutError):
                pass
            if loop.time() >= deadline:
                raise NotControllerError(leader)
            await asyncio.sleep(RETRY_BACKOFF_S)

    @property
    def active_here(self) -> bool:
        """Whether this broker is the active controller now (the quorum's published view)."""
        return self.quorum.view.is_active

    async def forward(self, frame: ReceivedFrame) -> bytes:
        """A client's admin request, sent as is to the active controller; returns the
        response frame once this broker's metadata has caught up with its effect."""

        async def remote(peer: PeerConnection) -> bytes:
            return await peer.forward(frame, REQUEST_TIMEOUT_S)

        async def not_here() -> bytes:
            raise ServeLocallyError  # this broker became the controller meanwhile

        response = await self._call(not_here, remote)
        await self.barrier()
        return response

    async def barrier(self, timeout_s: float = 5.0) -> None:
        """Wait until this broker has replayed everything the controller has committed, so
        a client that created a topic here sees it here. Best effort, bounded by
        ``timeout_s``."""

        async def remote(peer: PeerConnection) -> int:
            request = build(
                quorum_req.DescribeQuorumRequest,
                {
                    "topics": (
                        build(
                            quorum_req.TopicData,
                            {
                                "topic_name": METADATA_TOPIC,
                                "partitions": (
                                    build(quorum_req.PartitionData, {"partition_index": 0}),
                                ),
                            },
                        ),
                    )
                },
            )
            response = await peer.request(request, REQUEST_TIMEOUT_S)
            if response.error_code != ErrorCode.none or not response.topics:
                raise NotControllerReply  # it no longer leads the quorum
            return int(response.topics[0].partitions[0].high_watermark)

        async def local() -> int:
            return self.quorum.high_watermark

        try:
            high_watermark = await self._call(local, remote, timeout_s)
        except NotControllerError:
            return  # no leader to compare with: the caller's change is committed anyway
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while self._applied_end_offset() < high_watermark and loop.time() < deadline:
            await asyncio.sleep(0.005)

    # ---- broker lifecycle ----------------------------------------------------------------
    async def register_broker(
        self, broker_id: int, host: str, port: int, rack: str | None, incarnation_id: str
    ) -> int:
        async def remote(peer: PeerConnection) -> int:
            listener = build(
                register_req.Listener,
                {"name": "PLAINTEXT", "host": host, "port": port, "security_protocol": 0},
            )
            request = build(
                register_req.BrokerRegistrationRequest,
                {
                    "broker_id": broker_id,
                    "cluster_id": self.quorum.cluster_id,
                    "incarnation_id": uuid.UUID(incarnation_id),
                    "listeners": (listener,),
                    "features": (),
                    "rack": rack,
                },
            )
            response = await peer.request(request, REQUEST_TIMEOUT_S)
            _check(response.error_code)
            return int(response.broker_epoch)

        return await self._call(
            lambda: self.service.register_broker(broker_id, host, port, rack, incarnation_id),
            remote,
        )

    async def heartbeat(
        self,
        broker_id: int,
        broker_epoch: int,
        metadata_offset: int,
        want_fence: bool = False,
        want_shut_down: bool = False,
        timeout_s: float = CALL_TIMEOUT_S,
    ) -> HeartbeatReply:
        async def remote(peer: PeerConnection) -> HeartbeatReply:
            request = build(
                heartbeat_req.BrokerHeartbeatRequest,
                {
                    "broker_id": broker_id,
                    "broker_epoch": broker_epoch,
                    "current_metadata_offset": metadata_offset,
                    "want_fence": want_fence,
                    "want_shut_down": want_shut_down,
                },
            )
            response = await peer.request(request, REQUEST_TIMEOUT_S)
            if response.error_code == ErrorCode.not_controller:
                raise NotControllerReply
            return HeartbeatReply(
                ErrorCode(response.error_code),
                bool(response.is_caught_up),
                bool(response.is_fenced),
                bool(response.should_shut_down),
            )

        return await self._call(
            lambda: self.service.heartbeat(
                broker_id, broker_epoch, metadata_offset, want_fence, want_shut_down
            ),
            remote,
            timeout_s,
        )

    async def allocate_producer_ids(self, broker_id: int, broker_epoch: int) -> int:
        async def remote(peer: PeerConnection) -> int:
            request = build(
                alloc_req.AllocateProducerIdsRequest,
                {"broker_id": broker_id, "broker_epoch": broker_epoch},
            )
            response = await peer.request(request, REQUEST_TIMEOUT_S)
            _check(response.error_code)
            return int(response.producer_id_start)

        return await self._call(
            lambda: self.service.allocate_producer_ids(broker_id, broker_epoch), remote
        )

    async def alter_partition(
        self,
        broker_id: int,
        broker_epoch: int,
        topic: str,
        topic_id: str,
        partition: int,
        leader_epoch: int,
        partition_epoch: int,
        new_isr: tuple[int, ...],
    ) -> AlterPartitionReply:
        async def remote(peer: PeerConnection) -> AlterPartitionReply:
            data = build(
                alter_req.PartitionData,
                {
                    "partition_index": partition,
                    "leader_epoch": leader_epoch,
                    "new_isr": new_isr,
                    "leader_recovery_state": 0,
                    "partition_epoch": partition_epoch,
                },
            )
            request = build(
                alter_req.AlterPartitionRequest,
                {
                    "broker_id": broker_id,
                    "broker_epoch": broker_epoch,
                    "topics": (
                        build(
                            alter_req.TopicData,
                            {"topic_id": uuid.UUID(topic_id), "partitions": (data,)},
                        ),
                    ),
                },
            )
            response = await peer.request(request, REQUEST_TIMEOUT_S)
            _check(response.error_code)
            p = response.topics[0].partitions[0]
            error = ErrorCode(p.error_code)
            if error == ErrorCode.not_controller:
                raise NotControllerReply
            if error != ErrorCode.none:
                return AlterPartitionReply(error)
            registration = PartitionRegistration(
                (),
                tuple(int(b) for b in p.isr),
                int(p.leader_id),
                int(p.leader_epoch),
                int(p.partition_epoch),
            )
            return AlterPartitionReply(error, registration)

        return await self._call(
            lambda: self.service.alter_partition(
                broker_id, broker_epoch, topic, partition, leader_epoch, partition_epoch, new_isr
            ),
            remote,
            REQUEST_TIMEOUT_S,
        )

    # ---- operations brokers start themselves (auto-create, internal topics, settings) ------
    async def create_topics(
        self,
        topics: Sequence[CreatableTopic],
        validate_only: bool = False,
        timeout_s: float = CALL_TIMEOUT_S,
        propagation_timeout_s: float | None = None,
    ) -> list[CreatedTopic]:
        """``propagation_timeout_s`` bounds how long the controller waits for every live
        broker to replay the new topics (CreateTopics' own ``timeout``)."""

        async def remote(peer: PeerConnection) -> list[CreatedTopic]:
            request = build(
                create_req.CreateTopicsRequest,
                {
                    "topics": tuple(_creatable(t) for t in topics),
                    "timeout": int(1000 * (propagation_timeout_s or 10)),
                    "validate_only": validate_only,
                },
            )
            response = await peer.request(request, REQUEST_TIMEOUT_S)
            results = [
                CreatedTopic(
                    t.name,
                    ApiResult(ErrorCode(t.error_code), t.error_message),
                    None,
                    int(t.num_partitions),
                    int(t.replication_factor),
                )
                for t in response.topics
            ]
            if any(r.result.error == ErrorCode.not_controller for r in results):
                raise NotControllerReply
            return results

        created = await self._call(
            lambda: self.service.create_topics(topics, validate_only, propagation_timeout_s),
            remote,
            timeout_s,
        )
        await self.barrier()
        return created

    async def alter_configs(
        self,
        resource_type: str,
        resource_name: str,
        changes: dict[str, str | None],
        replace_all: bool,
        validate_only: bool = False,
    ) -> ApiResult:
        async def remote(peer: PeerConnection) -> ApiResult:
            if replace_all:
                raise NotControllerError(self.node_id)  # legacy AlterConfigs is forwarded whole
            configs = tuple(
                build(
                    configs_req.AlterableConfig,
                    {"name": k, "config_operation": 0 if v is not None else 1, "value": v},
                )
                for k, v in changes.items()
            )
            resource = build(
                configs_req.AlterConfigsResource,
                {
                    "resource_type": RESOURCE_TYPES[resource_type],
                    "resource_name": resource_name,
                    "configs": configs,
                },
            )
            request = build(
                configs_req.IncrementalAlterConfigsRequest,
                {"resources": (resource,), "validate_only": validate_only},
            )
            response = await peer.request(request, REQUEST_TIMEOUT_S)
            r = response.responses[0]
            if r.error_code == ErrorCode.not_controller:
                raise NotControllerReply
            return ApiResult(ErrorCode(r.error_code), r.error_message)

        result = await self._call(
            lambda: self.service.alter_configs(
                resource_type, resource_name, changes, replace_all, validate_only
            ),
            remote,
        )
        await self.barrier()
        return result

    # ---- only ever run on the active controller (clients' requests are forwarded whole) --
    async def _on_controller(self, operation: Callable[[], Awaitable[T]]) -> T:
        """Run an operation of the active controller here; answer once this broker's own
        image shows it (its handler may read the image next)."""
        result = await self._call(operation, None)
        await self.barrier()
        return result

    async def delete_topics(
        self, names: Sequence[str], propagation_timeout_s: float | None = None
    ) -> list[tuple[str, ApiResult]]:
        return await self._on_controller(
            lambda: self.service.delete_topics(names, propagation_timeout_s)
        )

    async def create_partitions(
        self,
        topic: str,
        count: int,
        validate_only: bool = False,
        assignments: Sequence[tuple[int, ...]] | None = None,
        propagation_timeout_s: float | None = None,
    ) -> ApiResult:
        return await self._on_controller(
            lambda: self.service.create_partitions(
                topic, count, validate_only, assignments, propagation_timeout_s
            )
        )

    async def alter_partition_reassignments(
        self,
        wanted: Sequence[tuple[str, int, Sequence[int] | None]],
        propagation_timeout_s: float | None = None,
    ) -> list[tuple[str, int, ApiResult]]:
        return await self._on_controller(
            lambda: self.service.alter_partition_reassignments(wanted, propagation_timeout_s)
        )

    async def elect_leaders(
        self,
        election_type: int,
        partitions: Sequence[tuple[str, int]] | None,
        propagation_timeout_s: float | None = None,
    ) -> list[tuple[str, int, ApiResult]]:
        return await self._on_controller(
            lambda: self.service.elect_leaders(election_type, partitions, propagation_timeout_s)
        )


def _check(error_code: Any) -> None:
    if error_code == ErrorCode.not_controller:
        raise NotControllerReply
    if error_code != ErrorCode.none:
        raise ControllerRequestError(ErrorCode(error_code))


def _creatable(topic: CreatableTopic) -> Any:
    return build(
        create_req.CreatableTopic,
        {
            "name": topic.name,
            "num_partitions": topic.num_partitions,
            "replication_factor": topic.replication_factor,
            "assignments": tuple(
                build(
                    create_req.CreatableReplicaAssignment,
                    {"partition_index": p, "broker_ids": replicas},
                )
                for p, replicas in sorted(topic.assignments.items())
            ),
            "configs": tuple(
                build(create_req.CreatableTopicConfig, {"name": k, "value": v})
                for k, v in topic.configs.items()
            ),
        },
    )
