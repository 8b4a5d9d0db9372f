"""The kafkalite command: start a lab cluster, look inside it, break it.

Every command that changes the cluster says in one line what it did; one that cannot do
its job (a port in use, a directory owned by a running cluster, a bad setting) prints a
one-line ``error: ...`` and exits 1. ``kafkalite up`` and ``make up`` start the same
cluster (``LAB_BROKERS`` brokers from ``LAB_BASE_PORT``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.live import Live

from kafkalite.cli.events_view import NOW_LINE, RECENT_EVENTS, event_line, recent
from kafkalite.cli.reports import down_report, fault_report, heal_all_report, restart_report
from kafkalite.cli.shell import DEFAULT_DIR, Shell, this_program
from kafkalite.cli.status_view import status_table
from kafkalite.cluster import BrokerState, Cluster, ClusterError
from kafkalite.cluster.spec import parse_configs
from kafkalite.events import EventType
from kafkalite.lab.connection import LAB_BASE_PORT, LAB_BROKERS, attach_cluster, in_course_stack

VERBS = {
    "kill": "kill one broker (SIGKILL: a crash)",
    "stop": "stop one broker (controlled shutdown)",
    "restart": "stop one broker (controlled shutdown) and start it again",
    "pause": "pause one broker (SIGSTOP: hung, holding its connections)",
    "resume": "resume a paused broker",
    "start": "start a stopped or dead broker",
    "isolate": "cut one broker off from its peers and the quorum",
    "partial-partition": "cut one broker's replication links to every peer, "
    "keeping its links to the controller quorum",
    "heal": "undo isolate, slow and partial-partition (one broker, or all)",
    "slow": "delay one broker's replication traffic each way",
}
REFRESH_S = 0.5
WATCH_ANSWER_S = 1.0
"""How long a ``status --watch`` frame waits for a broker's ``/state``: faults show within
``REFRESH_S`` plus this (the issue asks 2 s), however busy the brokers are."""
DESCRIPTION = """\
Start a Kafka-Lite lab cluster, look inside it, break it.

Every command that changes the cluster says what it did. A command that cannot do its
job prints one line starting with "error:" and exits with status 1.
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kafkalite",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        return sub.add_parser(
            name,
            help=help_text,
            description=help_text[0].upper() + help_text[1:] + ".",
            formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        )

    up = command("up", "start a cluster in the background (the same one make up starts)")
    up.add_argument("--brokers", type=int, default=LAB_BROKERS, help="how many brokers")
    up.add_argument("--dir", default=DEFAULT_DIR, help="the cluster's folder")
    up.add_argument("--port", type=int, default=LAB_BASE_PORT, help="first broker's Kafka port")
    up.add_argument("--config", action="append", default=[], metavar="NAME=VALUE")

    status = command("status", "brokers, partitions and offsets")
    status.add_argument("--dir", default=DEFAULT_DIR, help="the cluster's folder")
    status.add_argument("--json", action="store_true", help="print the snapshot as JSON")
    status.add_argument(
        "--watch",
        action="store_true",
        help="redraw it every interval until Ctrl-C (without a terminal: print one table "
        "after another)",
    )
    status.add_argument(
        "--interval", type=float, default=REFRESH_S, metavar="SECONDS", help="for --watch"
    )

    events = command("events", "what happened: elections, ISR changes, truncations, fences")
    events.add_argument("--dir", default=DEFAULT_DIR, help="the cluster's folder")
    events.add_argument(
        "--follow",
        action="store_true",
        help=f"start at the present (the last {RECENT_EVENTS} events), then print new ones",
    )
    events.add_argument(
        "--replay",
        "--since-start",
        action="store_true",
        help="with --follow: start from every event the brokers still hold",
    )
    events.add_argument(
        "--type",
        action="append",
        default=[],
        choices=[t.value for t in EventType],
        metavar="TYPE",
        help="only events of this type (repeatable; kafkalite/events.py lists them)",
    )

    def served(name: str, help_text: str, server: str, port: int) -> argparse.ArgumentParser:
        """A command that starts or reuses the cluster and serves a web app beside it."""
        served = command(name, help_text)
        served.add_argument("--dir", default=DEFAULT_DIR, help="the cluster's folder")
        served.add_argument("--brokers", type=int, default=LAB_BROKERS, help="how many brokers")
        served.add_argument(
            "--kafka-port", type=int, default=LAB_BASE_PORT, help="first broker's Kafka port"
        )
        served.add_argument("--config", action="append", default=[], metavar="NAME=VALUE")
        served.add_argument("--ip", default="127.0.0.1", help=f"{server}'s address (loopback)")
        served.add_argument("--port", type=int, default=port, help=f"{server}'s port")
        return served

    lab = served("lab", "start (or reuse) a cluster and JupyterLab on the labs", "JupyterLab", 8888)
    lab.add_argument("--labs", default="labs", help="the notebooks' folder")
    demo = served(
        "demo", "start (or reuse) a cluster and the instructor's presenter", "Voilà", 8866
    )
    demo.add_argument("scenario", nargs="?", help="open at this scenario (--list shows them)")
    demo.add_argument("--list", action="store_true", help="list the scenarios and exit")

    down = command("down", "stop every broker (controlled shutdown), JupyterLab and the demo")
    down.add_argument("--dir", default=DEFAULT_DIR, help="the cluster's folder")

    for verb, help_text in VERBS.items():
        fault = command(verb, help_text)
        fault.add_argument(
            "broker_id", type=int, nargs="?" if verb == "heal" else None, help="the broker's id"
        )
        fault.add_argument("--dir", default=DEFAULT_DIR, help="the cluster's folder")
        if verb == "slow":
            fault.add_argument(
                "--delay-ms", type=int, default=500, help="the delay each way, in ms"
            )

    sub.add_parser(
        "broker",
        help="run one broker in the foreground (python -m kafkalite.broker --help)",
        add_help=False,
        prefix_chars="\0",  # every argument, --help too, is the broker's own
    ).add_argument("broker_args", nargs=argparse.REMAINDER)
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
    brokers = f"{args.brokers} broker{'s' if args.brokers > 1 else ''}"
    print(f"started {brokers} in {args.dir}; bootstrap servers:", file=sys.stderr)
    print(cluster.bootstrap_servers)
    print(f"to stop it: {_shell(args).command('down')}", file=sys.stderr)
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
    try:
        if console.is_terminal:
            with Live(status_table(_now(cluster)), console=console, auto_refresh=False) as live:
                while True:
                    time.sleep(args.interval)
                    live.update(status_table(_now(cluster)), refresh=True)
        while True:  # a pipe or a file: one dated table after another, nothing redrawn
            console.print(f"-- {time.strftime('%H:%M:%S')} --")
            console.print(status_table(_now(cluster)))
            console.file.flush()
            time.sleep(args.interval)
    except KeyboardInterrupt:
        return 0


def _now(cluster: Cluster) -> dict[str, Any]:
    """The cluster as it is now, whichever shell started or stopped its brokers meanwhile
    (``kafkalite start 3`` elsewhere gives broker 3 a new pid). A broker too busy to
    answer within ``WATCH_ANSWER_S`` shows ``?`` in this frame rather than holding it up."""
    cluster.follow_other_shells()
    return cluster.status(timeout_s=WATCH_ANSWER_S)


def _events(args: argparse.Namespace) -> int:
    """Without ``--follow``: every event the brokers hold. With it: the news, after the
    last ``RECENT_EVENTS`` for context (``--replay``: after all of them); a line on stderr
    divides what had happened from what happens now."""
    cluster = attach_cluster(Path(args.dir))
    stream = cluster.event_stream()
    wanted = set(args.type)

    def shown(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [e for e in events if not wanted or e["type"] in wanted]

    history = shown(stream.poll(cluster.broker_states()))
    if args.follow and not args.replay:
        history = recent(history, RECENT_EVENTS)
    for event in history:
        print(event_line(event), flush=True)
    if not args.follow:
        return 0
    print(NOW_LINE, file=sys.stderr, flush=True)
    try:
        while True:
            time.sleep(REFRESH_S)
            cluster.follow_other_shells()
            for event in shown(stream.poll(cluster.broker_states())):
                print(event_line(event), flush=True)
    except KeyboardInterrupt:
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
            _shell(args).command("down"),
        )
    )
    return 0


def _demo(args: argparse.Namespace) -> int:
    from kafkalite.demo import catalog  # noqa: PLC0415  (light: no scenario is loaded)

    if args.list:
        for line in catalog.listing():
            print(line)
        return 0
    if args.scenario is not None:
        try:
            catalog.scenario_info(args.scenario)
        except KeyError as error:
            raise ClusterError(str(error.args[0])) from None
    from kafkalite.demo.server import open_demo  # noqa: PLC0415  (only this command needs it)

    print(
        open_demo(
            Path(args.dir),
            args.scenario,
            args.brokers,
            args.kafka_port,
            parse_configs(args.config),
            args.ip,
            args.port,
            _shell(args).command("down"),
        )
    )
    return 0


def _down(args: argparse.Namespace) -> int:
    """The brokers first, then JupyterLab and the demo's Voilà: a broker a notebook started
    (``lab.start(2)``, the dashboard's start button, a demo step) is a child of its kernel,
    and stopping a server ends its kernels' process trees, which would kill that broker
    instead of shutting it down."""
    from kafkalite.demo import server as demo_server  # noqa: PLC0415  (light, as below)
    from kafkalite.lab import jupyter  # noqa: PLC0415  (light: no notebook libraries)

    root = Path(args.dir)

    def stop_servers() -> None:
        if jupyter.stop(root):
            print("JupyterLab stopped, with its kernels")
        if demo_server.stop(root):
            print("the demo's Voilà stopped, with its kernels")

    try:
        cluster = attach_cluster(root)
    except ClusterError:
        stop_servers()
        raise
    before = cluster.broker_states()
    cluster.down()
    report = down_report(before, cluster.broker_states())
    stop_servers()
    for line in report:
        print(line)
    return 0


def _fault(args: argparse.Namespace) -> int:
    cluster = attach_cluster(Path(args.dir))
    if args.command == "heal" and args.broker_id is None:
        cluster.heal(None)
        print(heal_all_report())
        return 0
    verb = args.command
    if verb == "restart":
        _restart(cluster, args.broker_id, _shell(args))
        return 0
    if verb == "slow":
        cluster.slow(args.broker_id, args.delay_ms)
    else:
        action: Callable[[int], None] = getattr(cluster, verb.replace("-", "_"))
        action(args.broker_id)
    after = cluster.broker_states()[args.broker_id]
    delay_ms = getattr(args, "delay_ms", None)
    print(fault_report(verb, args.broker_id, after, delay_ms, shell=_shell(args)))
    return 0


_UP = (BrokerState.RUNNING, BrokerState.PAUSED, BrokerState.ISOLATED)


def _restart(cluster: Cluster, broker_id: int, shell: Shell) -> None:
    """Stop and start apart, so that a stop that ended in SIGKILL is reported as one, and
    a broker that was not running is reported as started, not restarted."""
    before = cluster.broker_states()[broker_id]
    stopped = None
    if before in _UP:
        cluster.stop(broker_id)
        stopped = cluster.broker_states()[broker_id]
    cluster.start(broker_id)
    after = cluster.broker_states()[broker_id]
    for line in restart_report(broker_id, before, stopped, after, shell):
        print(line)


def _shell(args: argparse.Namespace) -> Shell:
    """The user's shell, for the commands this one tells them to run."""
    return Shell(this_program(), getattr(args, "dir", DEFAULT_DIR))


def _broker(args: argparse.Namespace) -> int:
    """Become ``python -m kafkalite.broker`` with the same arguments (exec): the CLI never
    imports the broker; the broker's own parser checks them."""
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, "-m", "kafkalite.broker", *args.broker_args])


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    commands: dict[str, Callable[[argparse.Namespace], int]] = {
        "up": _up,
        "status": _status,
        "events": _events,
        "lab": _lab,
        "demo": _demo,
        "down": _down,
        "broker": _broker,
        **dict.fromkeys(VERBS, _fault),
    }
    try:
        return commands[args.command](args)
    except ClusterError as exc:
        print(f"error: {_shell(args).rewrite(str(exc))}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
