"""The shape of a lab cluster, persisted as ``<dir>/cluster.json`` so every shell sees it.

Broker ``i`` (1-based) listens on ``base_port + i - 1`` for Kafka clients, on that
port + 100 for introspection and on that port + 200 for its controller listener (the
metadata quorum and the requests brokers send their controller); its data lives in
``<dir>/broker-<i>``. Every broker is a voter of the metadata quorum (KRaft's combined mode).
"""

from __future__ import annotations

import json
import socket
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

INTROSPECTION_OFFSET = 100
CONTROLLER_OFFSET = 200
SPEC_FILE = "cluster.json"


class ClusterError(Exception):
    """A one-line, user-facing reason why a cluster operation cannot proceed."""


@dataclass(slots=True)
class BrokerSpec:
    broker_id: int
    host: str
    port: int
    admin_port: int
    data_dir: str
    controller_port: int
    pid: int | None = None
    stopped: bool = False  # stopped on purpose (stop/kill), as opposed to crashed

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(slots=True)
class ClusterSpec:
    root: str
    brokers: list[BrokerSpec]
    configs: dict[str, str] = field(default_factory=dict)
    cluster_id: str = field(default_factory=lambda: uuid.uuid4().hex[:22])

    @classmethod
    def build(
        cls,
        root: Path,
        brokers: int,
        base_port: int,
        configs: dict[str, str],
        host: str = "127.0.0.1",
    ) -> ClusterSpec:
        if brokers < 1:
            raise ClusterError(f"--brokers must be at least 1, got {brokers}")
        highest = 65535 - CONTROLLER_OFFSET - brokers
        if not 1024 <= base_port <= highest:
            raise ClusterError(f"--port {base_port} is outside 1024..{highest}")
        specs = [
            BrokerSpec(
                i,
                host,
                base_port + i - 1,
                base_port + i - 1 + INTROSPECTION_OFFSET,
                str(root.resolve() / f"broker-{i}"),
                base_port + i - 1 + CONTROLLER_OFFSET,
            )
            for i in range(1, brokers + 1)
        ]
        return cls(str(root.resolve()), specs, dict(configs))

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(b.address for b in self.brokers)

    @property
    def quorum_voters(self) -> str:
        """``controller.quorum.voters``: every broker's controller listener."""
        return ",".join(f"{b.broker_id}@{b.host}:{b.controller_port}" for b in self.brokers)

    def broker_configs(self, broker_id: int) -> dict[str, str]:
        """What one broker is started with: the cluster's settings plus its quorum wiring."""
        broker = self.broker(broker_id)
        return {
            **self.configs,
            "controller.listener.port": str(broker.controller_port),
            "controller.quorum.voters": self.quorum_voters,
        }

    def broker(self, broker_id: int) -> BrokerSpec:
        for b in self.brokers:
            if b.broker_id == broker_id:
                return b
        ids = ", ".join(str(b.broker_id) for b in self.brokers)
        raise ClusterError(f"no broker {broker_id} in this cluster (brokers: {ids})")

    def save(self) -> None:
        path = Path(self.root) / SPEC_FILE
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2) + "\n")
        tmp.replace(path)

    @classmethod
    def load(cls, root: Path) -> ClusterSpec:
        path = root / SPEC_FILE
        if not path.exists():
            raise ClusterError(f"no cluster in {root} (run `kafkalite up --dir {root}` first)")
        raw = json.loads(path.read_text())
        return cls(
            raw["root"],
            [BrokerSpec(**b) for b in raw["brokers"]],
            raw["configs"],
            raw["cluster_id"],
        )

    def format_storage(self) -> None:
        """Give every broker's data directory the cluster's id, as ``kafka-storage format``
        does: brokers of one cluster must agree on it, or clients refuse to mix them."""
        for b in self.brokers:
            meta = Path(b.data_dir) / "meta.properties"
            if not meta.exists():
                meta.parent.mkdir(parents=True, exist_ok=True)
                meta.write_text(f"version=1\ncluster.id={self.cluster_id}\nnode.id={b.broker_id}\n")


def parse_configs(pairs: list[str]) -> dict[str, str]:
    configs: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise ClusterError(f"invalid setting {pair!r}: expected name=value")
        configs[name.strip()] = value.strip()
    return configs


def check_port_free(host: str, port: int) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            raise ClusterError(f"port {port} on {host} is already in use") from None
