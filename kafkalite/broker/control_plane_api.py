"""What the broker's two threads know of each other: the one typed hand-off between the
data plane (``broker.data_plane``, the main loop: clients, replication, coordinators) and
the control plane (``broker.control_plane``: the metadata quorum, the controller, the
controller channel, heartbeats, on a loop of their own).

Neither package imports the other (an import-linter contract); the composition root
(``broker.broker``) wires them. The data plane sees the control plane only as

- ``Controller``: the operations it asks of the active controller (create a topic, alter
  a partition's ISR, forward a client's admin request...), each awaited from the main loop
  and run on the control loop by ``ControllerChannel``;
- ``QuorumView``: the quorum's state, a value replaced whole after every step, read from
  any thread;
- committed metadata, handed over in commit order by ``broker.metadata_publisher``;

and the errors and addresses below, which cross with them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from kafkalite.controller.replication_control import AlterPartitionReply
from kafkalite.controller.results import ApiResult
from kafkalite.controller.topic_control import CreatableTopic, CreatedTopic
from kafkalite.protocol.errors import ErrorCode
from kafkalite.protocol.framing import ReceivedFrame
from kafkalite.raft.node import QuorumInfo

CALL_TIMEOUT_S = 15.0
"""How long a call to the controller keeps retrying through elections before it fails."""


class NotControllerError(Exception):
    """This node cannot write metadata now; ``leader_id`` is who leads (-1: unknown)."""

    def __init__(self, leader_id: int) -> None:
        super().__init__(f"not the active controller (leader: {leader_id})")
        self.leader_id = leader_id


@dataclass(frozen=True, slots=True)
class VoterAddress:
    node_id: int
    host: str
    port: int


def parse_voters(value: str) -> dict[int, VoterAddress]:
    """Kafka's ``controller.quorum.voters``: ``1@host:port,2@host:port,...``."""
    voters: dict[int, VoterAddress] = {}
    for item in value.split(","):
        node, at, address = item.strip().partition("@")
        host, colon, port = address.rpartition(":")
        if not at or not colon or not node.isdigit() or not port.isdigit():
            raise ValueError(f"expected id@host:port in controller.quorum.voters, got {item!r}")
        voters[int(node)] = VoterAddress(int(node), host, int(port))
    return voters


BROKER_CLIENT_ID_PREFIX = "kafkalite-broker-"
"""The client id a broker's requests to the controller carry (``kafkalite-broker-<id>``)."""


class ControllerRequestError(Exception):
    """The controller refused a broker's request (for example STALE_BROKER_EPOCH)."""

    def __init__(self, code: ErrorCode) -> None:
        super().__init__(f"controller answered {code.name}")
        self.code = code


class ServeLocallyError(Exception):
    """A request to forward found this broker to be the active controller after all."""


@dataclass(frozen=True, slots=True)
class QuorumView:
    """The quorum as the rest of the broker may read it from any thread: a value the
    driver replaces whole after every step (never changed in place)."""

    leader_id: int = -1
    epoch: int = 0
    high_watermark: int = 0
    log_end_offset: int = 0
    applied_end_offset: int = 0
    is_active: bool = False
    info: QuorumInfo | None = None
    """DescribeQuorum's view (leader only), with wall-clock timestamps."""
    leader_reachable: bool = False
    """This voter leads, or knows a leader it has not found gone: a leader that was
    killed or stopped is known unreachable at once, before the quorum elects another
    (which takes ``fetch.timeout.ms`` and an election). A leader that is merely slow to
    answer (busy, paused) counts as reachable."""
    gone_voters: frozenset[int] = frozenset()
    """Other voters whose process this one found no longer listening, with no sign of
    life since (see ``gone_voters``); kept through elections, until they are fenced."""


class AlterPartitionChannel(Protocol):
    """What the ISR manager asks of the active controller (a part of ``Controller``)."""

    async def barrier(self, timeout_s: float = 5.0) -> None:
        """Wait until this broker's metadata has caught up with the controller's."""
        ...

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
    ) -> AlterPartitionReply: ...


class Controller(AlterPartitionChannel, Protocol):
    """The active controller, as the data plane asks it (``ControllerChannel`` is it):
    in-process when this broker leads the quorum, else a Kafka request to the leader."""

    @property
    def active_here(self) -> bool:
        """Whether this broker is the active controller now."""
        ...

    async def forward(self, frame: ReceivedFrame) -> bytes:
        """A client's admin request, as it came; the response frame (``ServeLocallyError``:
        this broker is the controller, serve it here)."""
        ...

    async def create_topics(
        self,
        topics: Sequence[CreatableTopic],
        validate_only: bool = False,
        timeout_s: float = CALL_TIMEOUT_S,
        propagation_timeout_s: float | None = None,
    ) -> list[CreatedTopic]: ...

    async def alter_configs(
        self,
        resource_type: str,
        resource_name: str,
        changes: dict[str, str | None],
        replace_all: bool,
        validate_only: bool = False,
    ) -> ApiResult: ...

    async def delete_topics(
        self, names: Sequence[str], propagation_timeout_s: float | None = None
    ) -> list[tuple[str, ApiResult]]: ...

    async def create_partitions(
        self,
        topic: str,
        count: int,
        validate_only: bool = False,
        assignments: Sequence[tuple[int, ...]] | None = None,
        propagation_timeout_s: float | None = None,
    ) -> ApiResult: ...

    async def alter_partition_reassignments(
        self,
        wanted: Sequence[tuple[str, int, Sequence[int] | None]],
        propagation_timeout_s: float | None = None,
    ) -> list[tuple[str, int, ApiResult]]: ...

    async def elect_leaders(
        self,
        election_type: int,
        partitions: Sequence[tuple[str, int]] | None,
        propagation_timeout_s: float | None = None,
    ) -> list[tuple[str, int, ApiResult]]: ...
