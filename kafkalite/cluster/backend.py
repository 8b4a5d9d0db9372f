"""How brokers are run: the verbs every backend implements (local processes today,
Docker containers later), so notebooks, the CLI and the grader never care which."""

from __future__ import annotations

import enum
from typing import Protocol

from kafkalite.cluster.spec import BrokerSpec, ClusterSpec


class BrokerState(enum.Enum):
    RUNNING = "running"
    PAUSED = "paused"
    STOPPED = "stopped"  # stopped on purpose (controlled shutdown)
    DEAD = "dead"  # killed or crashed: no controlled shutdown happened
    ISOLATED = "isolated"


class ClusterBackend(Protocol):
    ready_timeout_s: float
    """How long a started broker may take to answer its introspection endpoint."""

    def start(self, broker: BrokerSpec, configs: dict[str, str]) -> None: ...

    def start_all(self, brokers: list[tuple[BrokerSpec, dict[str, str]]]) -> None:
        """Start several brokers at once (a cluster's start), each with its settings."""

    def kill(self, broker: BrokerSpec) -> None:
        """SIGKILL: no shutdown, no flush; the page cache survives, as after a crash."""

    def stop(self, broker: BrokerSpec, timeout_s: float = 10) -> None:
        """Controlled shutdown (SIGTERM), escalating to SIGKILL after ``timeout_s``. A
        broker that had to be killed reads as ``DEAD``, not ``STOPPED``: no controlled
        shutdown happened."""

    def pause(self, broker: BrokerSpec) -> None:
        """SIGSTOP: a hung broker that holds its connections but answers nothing."""

    def resume(self, broker: BrokerSpec) -> None: ...

    def state(self, broker: BrokerSpec) -> BrokerState: ...

    # ---- the network between brokers ------------------------------------------------

    def start_network(self, spec: ClusterSpec) -> None:
        """Whatever lets brokers reach each other with faults in between (before brokers).
        It may still be starting when this returns: the next ``start_all`` waits for it
        before any broker runs."""

    def stop_network(self, spec: ClusterSpec) -> None: ...

    def isolate(self, spec: ClusterSpec, broker_id: int) -> None:
        """Cut every link from and to the broker; it keeps serving its own clients."""

    def partial_partition(self, spec: ClusterSpec, broker_id: int) -> None:
        """Cut only the broker's replication links to and from every peer; its links to
        the controller quorum stay up."""

    def heal(self, spec: ClusterSpec, broker_id: int | None) -> None:
        """Undo isolate, slow and partial partition for one broker (None: every broker)."""

    def slow(self, spec: ClusterSpec, broker_id: int, delay_ms: int) -> None:
        """Delay the broker's follower fetching by ``delay_ms``."""

    def isolated(self, spec: ClusterSpec) -> set[int]: ...

    def partially_partitioned(self, spec: ClusterSpec) -> set[int]:
        """The brokers cut from their replication peers (``partial_partition``)."""

    def slowed(self, spec: ClusterSpec) -> dict[int, int]:
        """Each slowed broker's delay in ms (``slow``), until healed."""
