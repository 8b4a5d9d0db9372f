"""``kafkalite``: start a lab cluster, look inside it, break it.

Every command prints a one-line ``error: ...`` and exits 1 when it cannot do its job
(a port in use, a directory owned by a running cluster, a bad setting).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console
from rich.live import Live

from kafkalite.cli.status_view import status_table
from kafkalite.cluster import Cluster, ClusterError
from kafkalite.cluster.spec import parse_configs
from kafkalite.lab.connection import attach_cluster, in_course_stack

DEFAULT_DIR = ".kafkalite"
FAULT_VERBS = ("kill", "stop", "restart", "pause", "resume", "start")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kafkalite", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    up = sub.add_parser("up", help="start a cluster in the background")
    up.add_argument("--brokers", type=int, default=1)
    up.add_argument("--dir", default=DEFAULT_DIR)
    up.add_argument("--port", type=int, default=9092, help="first broker's Kafka port")
    up.add_argument("--config", action="append", default=[], metavar="NAME=VALUE")

    status = sub.add_parser("status", help="brokers, partitions and offsets")
    status.add_argument("--dir", default=DEFAULT_DIR)
    status.add_argument("--json", action="store_true")
    status.add_argument("--watch", action="store_true", help="refresh every second")

    lab = sub.add_parser("lab", help="start (or reuse) a cluster and JupyterLab on the labs")
    lab.add_argument("--dir", default=DEFAULT_DIR)
    lab.add_argument("--brokers", type=int, default=3)
    lab.add_argument("--kafka-port", type=int, default=9092, help="first broker's Kafka port")
    lab.add_argument("--config", action="append", default=[], metavar="NAME=VALUE")
    lab.add_argument("--labs", default="labs", help="the notebooks' folder")
    lab.add_argument("--ip", default="127.0.0.1", help="JupyterLab's address (default: loopback)")
    lab.add_argument("--port", type=int, default=8888, help="JupyterLab's port")

    down = sub.add_parser("down", help="stop every broker (controlled shutdown) and JupyterLab")
    down.add_argument("--dir", default=DEFAULT_DIR)

    for verb in FAULT_VERBS:
        fault = sub.add_parser(verb, help=f"{verb} one broker")
        fault.add_argument("broker_id", type=int)
        fault.add_argument("--dir", default=DEFAULT_DIR)

    isolate = sub.add_parser("isolate", help="cut one broker off from its peers and the quorum")
    isolate.add_argument("broker_id", type=int)
    isolate.add_argument("--dir", default=DEFAULT_DIR)
    heal = sub.add_parser("heal", help="undo isolate/slow (one broker, or all)")
    heal.add_argument("broker_id", type=int, nargs="?")
    heal.add_argument("--dir", default=DEFAULT_DIR)
    slow = sub.add_parser("slow", help="delay one broker's follower fetching")
    slow.add_argument("broker_id", type=int)
    slow.add_argument("--delay-ms", type=int, default=500)
    slow.add_argument("--dir", default=DEFAULT_DIR)

    broker = sub.add_parser("broker", help="run one broker in the foreground")
    broker.add_argument("--id", type=int, required=True)
    broker.add_argument("--host", default="127.0.0.1")
    broker.add_argument("--port", type=int, default=9092)
    broker.add_argument("--admin-port", type=int, default=9192)
    broker.add_argument("--data-dir", required=True)
    broker.add_argument("--config", action="append", default=[], metavar="NAME=VALUE")
    return parser


def _up(args: argparse.Namespace) -> int:
    if in_course_stack():
        raise ClusterError(
            "this is the course stack's lab container: its brokers are the broker-1..3 "
            "containers (`kafkalite status` shows them, `kafkalite start N` starts one)"
        )
    cluster = Cluster.up(
        Path(args.dir),
        brokers=args.brokers,
        base_port=args.port,
        configs=parse_configs(args.config),
    )
    print(f"started {args.brokers} broker(s) in {args.dir}", file=sys.stderr)
    print(cluster.bootstrap_servers)
    return 0


def _status(args: argparse.Namespace) -> int:
    cluster = attach_cluster(Path(args.dir))
    if args.json:
        print(json.dumps(cluster.status(), indent=2))
        return 0
    console = Console()
    if not args.watch:
        console.print(status_table(cluster.status()))
        return 0
    with Live(status_table(cluster.status()), console=console, refresh_per_second=2) as live:
        try:
            while True:
                time.sleep(1)
                live.update(status_table(cluster.status()))
        except KeyboardInterrupt:
            pass
    return 0


def _lab(args: argparse.Namespace) -> int:
    from kafkalite.lab.jupyter import open_lab  # noqa: PLC0415  (only this command needs it)

    print(
        open_lab(
            Path(args.dir),
            Path(args.labs),
            args.brokers,
            args.kafka_port,
            parse_configs(args.config),
            args.ip,
            args.port,
        )
    )
    return 0


def _down(args: argparse.Namespace) -> int:
    from kafkalite.lab import jupyter  # noqa: PLC0415  (light: no notebook libraries)

    if jupyter.stop(Path(args.dir)):
        print("JupyterLab stopped", file=sys.stderr)
    attach_cluster(Path(args.dir)).down()
    return 0


def _fault(args: argparse.Namespace) -> int:
    cluster = attach_cluster(Path(args.dir))
    action: Callable[[int], None] = getattr(cluster, args.command)
    action(args.broker_id)
    print(f"broker {args.broker_id}: {cluster.broker_states()[args.broker_id].value}")
    return 0


def _network_fault(args: argparse.Namespace) -> int:
    cluster = attach_cluster(Path(args.dir))
    if args.command == "isolate":
        cluster.isolate(args.broker_id)
    elif args.command == "slow":
        cluster.slow(args.broker_id, args.delay_ms)
    else:
        cluster.heal(args.broker_id)
    states = cluster.broker_states()
    print(", ".join(f"broker {b}: {s.value}" for b, s in states.items()))
    return 0


def _broker(args: argparse.Namespace) -> int:
    from kafkalite.broker.main import run_broker  # noqa: PLC0415  (only broker processes load it)

    return run_broker(args)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    commands: dict[str, Callable[[argparse.Namespace], int]] = {
        "up": _up,
        "status": _status,
        "lab": _lab,
        "down": _down,
        "broker": _broker,
        **dict.fromkeys(FAULT_VERBS, _fault),
        **dict.fromkeys(("isolate", "heal", "slow"), _network_fault),
    }
    try:
        return commands[args.command](args)
    except ClusterError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
