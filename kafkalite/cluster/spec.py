"""The shape of a lab cluster, persisted as ``<dir>/cluster.json`` so every shell sees it.

Broker ``i`` (1-based) listens on ``base_port + i - 1`` for Kafka clients and on that
port + 100 for introspection; its data lives in ``<dir>/broker-<i>``.
"""

from __future__ import annotations

import json
import socket
from dataclasses import asdict, dataclass, field
from pathlib import Path

INTROSPECTION_OFFSET = 100
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
        if not 1024 <= base_port <= 65535 - INTROSPECTION_OFFSET - brokers:
            raise ClusterError(f"--port {base_port} is outside 1024..{65535 - 200}")
        specs = [
            BrokerSpec(
                i,
                host,
                base_port + i - 1,
                base_port + i - 1 + INTROSPECTION_OFFSET,
                str(root.resolve() / f"broker-{i}"),
            )
            for i in range(1, brokers + 1)
        ]
        return cls(str(root.resolve()), specs, dict(configs))

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(b.address for b in self.brokers)

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
        return cls(raw["root"], [BrokerSpec(**b) for b in raw["brokers"]], raw["configs"])


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
