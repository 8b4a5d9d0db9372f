"""The shape of a lab cluster, persisted as ``<dir>/cluster.json`` so every shell sees it.

Broker ``i`` (1-based) listens on ``base_port + i - 1`` for Kafka clients, on that
port + 100 for introspection and on that port + 200 for its controller listener (the
metadata quorum and the requests brokers send their controller); its data lives in
``<dir>/broker-<i>``. Every broker is a voter of the metadata quorum (KRaft's combined mode).
With more than one broker, ports from ``base_port + 300`` are the fault layer's link
proxies (``cluster.faults``): brokers reach each other only through them.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

from kafkalite.cluster.faults import Link
from kafkalite.cluster.ports import bindable

INTROSPECTION_OFFSET = 100
CONTROLLER_OFFSET = 200
LINKS_OFFSET = 300
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
    link_base_port: int = 0  # first port of the fault layer's link proxies (0: none)
    links_pid: int | None = None
    links_host: str = "127.0.0.1"  # where brokers reach the link proxies

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
        highest = 65535 - LINKS_OFFSET - 2 * brokers * brokers
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
        link_base = base_port + LINKS_OFFSET if brokers > 1 else 0
        return cls(str(root.resolve()), specs, dict(configs), link_base_port=link_base)

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(b.address for b in self.brokers)

    def links(self) -> list[Link]:
        """Every directed link between two brokers, each through its own proxy port."""
        if not self.link_base_port:
            return []
        links = []
        port = self.link_base_port
        for src in self.brokers:
            for dst in self.brokers:
                if src.broker_id == dst.broker_id:
                    continue
                for kind, target in (
                    ("controller", dst.controller_port),
                    ("replication", dst.port),
                ):
                    links.append(Link(src.broker_id, dst.broker_id, kind, port, dst.host, target))
                    port += 1
        return links

    def _peer_endpoints(self, broker_id: int, kind: str) -> str:
        """``id@host:port`` of every other broker as ``broker_id`` reaches it."""
        return ",".join(
            f"{k.dst}@{self.links_host}:{k.listen_port}"
            for k in self.links()
            if k.src == broker_id and k.kind == kind
        )

    def broker_configs(self, broker_id: int) -> dict[str, str]:
        """What one broker is started with: the cluster's settings plus how it reaches its
        peers (through the link proxies when there are peers)."""
        broker = self.broker(broker_id)
        own = f"{broker_id}@{broker.host}:{broker.controller_port}"
        configs = {**self.configs, "controller.listener.port": str(broker.controller_port)}
        if self.link_base_port:
            voters = ",".join(filter(None, [own, self._peer_endpoints(broker_id, "controller")]))
            configs["controller.quorum.voters"] = voters
            configs["replica.fetch.endpoints"] = self._peer_endpoints(broker_id, "replication")
        else:
            configs["controller.quorum.voters"] = own
        return configs

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
        try:
            raw = json.loads(path.read_text())
            return cls(
                raw["root"],
                [BrokerSpec(**b) for b in raw["brokers"]],
                raw["configs"],
                raw["cluster_id"],
                raw["link_base_port"],
                raw["links_pid"],
                raw.get("links_host", "127.0.0.1"),
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ClusterError(
                f"{path} is not a cluster description this Kafka-Lite understands ({exc}); "
                f"if its brokers still run, stop them, then remove {root} and run `up` again"
            ) from None

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
    if not bindable(host, port):
        raise ClusterError(f"port {port} on {host} is already in use")
