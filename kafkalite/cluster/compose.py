"""The course stack of ``docker-compose.yml``: which containers exist and how they talk.

- ``broker-1`` .. ``broker-N``: one broker per container, each on the same ports as a
  local broker 1 (Kafka 9092, introspection 9192, controller 9292), reached by its service
  name, its data in its own named volume at ``/data``.
- ``links``: the fault layer's link proxies (``cluster/faults.py``), one per directed
  link, listening on every interface of that container. Brokers reach their peers only
  through it, exactly as local brokers reach theirs through the link-proxy daemon, so
  ``isolate`` and ``slow`` mean the same thing in both: an isolated broker still serves
  its own clients (the lab container's), which is the split-brain lesson.
- ``lab``: JupyterLab, the control node. Clients use ``broker-1:9092,...`` (the brokers'
  advertised listeners), which resolve on the course network.

This module is the one description of that topology: the Docker backend builds its
``ClusterSpec`` from it, and the containers' entry points below start from it, so the
port and peer arithmetic exists once. It imports neither the broker nor the Docker SDK
(the broker image has neither the SDK nor any need for it).

``python -m kafkalite.cluster.compose broker --id 1``  format ``/data``, then exec the broker
``python -m kafkalite.cluster.compose links``          write ``links.json``, exec the proxies
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from kafkalite.cluster.faults import FaultState, save_faults, save_links
from kafkalite.cluster.spec import (
    CONTROLLER_OFFSET,
    INTROSPECTION_OFFSET,
    LINKS_OFFSET,
    BrokerSpec,
    ClusterSpec,
)

KAFKA_PORT = 9092
DATA_DIR = "/data"
LINKS_DIR = "/links"
LINKS_HOST = "links"
DEFAULT_BROKERS = 3
# Every broker of a cluster must carry the same id in meta.properties (Kafka's
# ``kafka-storage format --cluster-id``); 22 characters, like Kafka's base64 UUIDs.
COURSE_CLUSTER_ID = "KafkaLiteCourseCluster"


def broker_host(broker_id: int) -> str:
    """The compose service name of a broker, which is also its host name."""
    return f"broker-{broker_id}"


def compose_spec(
    root: Path,
    brokers: int = DEFAULT_BROKERS,
    cluster_id: str = COURSE_CLUSTER_ID,
    configs: dict[str, str] | None = None,
) -> ClusterSpec:
    """The course stack as a ``ClusterSpec``: every broker on the same ports in its own
    container, peers reached through the ``links`` container. ``root`` is only where a
    client keeps its copy of the description (``cluster.json``)."""
    specs = [
        BrokerSpec(
            i,
            broker_host(i),
            KAFKA_PORT,
            KAFKA_PORT + INTROSPECTION_OFFSET,
            DATA_DIR,
            KAFKA_PORT + CONTROLLER_OFFSET,
        )
        for i in range(1, brokers + 1)
    ]
    return ClusterSpec(
        str(root),
        specs,
        dict(configs or {}),
        cluster_id,
        link_base_port=KAFKA_PORT + LINKS_OFFSET if brokers > 1 else 0,
        links_host=LINKS_HOST,
    )


def broker_command(spec: ClusterSpec, broker_id: int) -> list[str]:
    """``python -m kafkalite.broker`` arguments for one container: listen on every
    interface, advertise the service name, reach peers through the link proxies."""
    broker = spec.broker(broker_id)
    command = [
        "kafkalite.broker",
        "--id",
        str(broker_id),
        "--host",
        "0.0.0.0",
        "--port",
        str(broker.port),
        "--admin-port",
        str(broker.admin_port),
        "--data-dir",
        broker.data_dir,
        "--config",
        f"advertised.listeners=PLAINTEXT://{broker.address}",
    ]
    for name, value in spec.broker_configs(broker_id).items():
        command += ["--config", f"{name}={value}"]
    return command


def spec_from_environment(root: Path) -> ClusterSpec:
    """The stack as compose configures it: ``KAFKALITE_BROKERS`` brokers sharing
    ``KAFKALITE_CLUSTER_ID``; extra broker settings in ``KAFKALITE_CONFIG``
    (``name=value`` pairs separated by spaces)."""
    brokers = int(os.environ.get("KAFKALITE_BROKERS", DEFAULT_BROKERS))
    cluster_id = os.environ.get("KAFKALITE_CLUSTER_ID") or COURSE_CLUSTER_ID
    pairs = os.environ.get("KAFKALITE_CONFIG", "").split()
    configs = dict(pair.split("=", 1) for pair in pairs if "=" in pair)
    return compose_spec(root, brokers, cluster_id, configs)


def _exec(args: list[str]) -> None:
    """Replace this process, so the broker or proxy daemon is the direct child of the
    container's init and receives its SIGTERM itself."""
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, "-m", *args])


def _run_broker(broker_id: int) -> None:
    spec = spec_from_environment(Path(DATA_DIR))
    own = spec.broker(broker_id)
    own_only = ClusterSpec(spec.root, [own], cluster_id=spec.cluster_id)
    own_only.format_storage()
    _exec(broker_command(spec, broker_id))


def _run_links() -> None:
    root = Path(LINKS_DIR)
    spec = spec_from_environment(root)
    root.mkdir(parents=True, exist_ok=True)
    save_links(root, spec.links())
    save_faults(root, FaultState())  # a restarted network starts healed
    _exec(["kafkalite.cluster.link_proxies", "--dir", str(root), "--host", "0.0.0.0"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kafkalite.cluster.compose")
    sub = parser.add_subparsers(dest="role", required=True)
    broker = sub.add_parser("broker", help="format /data and run this container's broker")
    broker.add_argument("--id", type=int, required=True)
    sub.add_parser("links", help="run the link proxies between the brokers")
    args = parser.parse_args(argv)
    if args.role == "broker":
        _run_broker(args.id)
    else:
        _run_links()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
