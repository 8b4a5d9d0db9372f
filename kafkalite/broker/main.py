"""Run one broker in the foreground until SIGTERM/SIGINT: ``python -m kafkalite.broker``.

Every broker process starts here (the local supervisor, ``kafkalite broker``, the course
stack's containers): nothing else imports the broker, so the CLI and the notebook side
never load it.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
import time
from pathlib import Path

from kafkalite.broker.broker import Broker, BrokerConfig, advertised_address
from kafkalite.broker.gc_pauses import GcPauses, freeze_startup_objects
from kafkalite.broker.introspection import IntrospectionServer, broker_state
from kafkalite.metadata.config_defs import InvalidConfigError, validate_broker_configs


def parse_overrides(pairs: list[str]) -> dict[str, str]:
    overrides: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise InvalidConfigError(pair, None, "expected key=value")
        overrides[name.strip()] = value.strip()
    validate_broker_configs(dict(overrides), static=True)
    if overrides.get("advertised.listeners"):
        advertised_address(overrides["advertised.listeners"])
    return overrides


async def serve(config: BrokerConfig) -> None:
    broker = Broker(config)
    gc_pauses = GcPauses()
    gc_pauses.install()
    introspection = IntrospectionServer(
        lambda: broker_state(broker, gc_pauses.state()), broker.events
    )
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, broker.request_stop)
    await broker.start()
    await introspection.start(config.host, config.admin_port)
    freeze_startup_objects()  # see gc_pauses: a full collection stops both threads
    logging.getLogger(__name__).info(
        "broker %d listening on %s:%d (introspection :%d)",
        config.broker_id,
        config.host,
        config.port,
        config.admin_port,
    )
    try:
        await broker.serve_forever()
    finally:
        asked = time.monotonic()
        logging.getLogger(__name__).info("shutdown: asked")
        await introspection.stop()
        await broker.stop()
        logging.getLogger(__name__).info(
            "shutdown: broker stopped in %.2f s", time.monotonic() - asked
        )


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m kafkalite.broker", description="run one broker in the foreground"
    )
    p.add_argument("--id", type=int, required=True)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=9092)
    p.add_argument("--admin-port", type=int, default=9192)
    p.add_argument("--data-dir", required=True)
    p.add_argument("--config", action="append", default=[], metavar="NAME=VALUE")
    return p


def run_broker(args: argparse.Namespace) -> int:
    """Run the broker ``args`` describe (see ``parser``); returns the process exit code."""
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s [broker %(process)d] %(name)s: %(message)s",
    )
    try:
        overrides = parse_overrides(list(args.config or []))
    except InvalidConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    config = BrokerConfig(
        broker_id=int(args.id),
        host=args.host,
        port=int(args.port),
        admin_port=int(args.admin_port),
        data_dir=Path(args.data_dir),
        overrides=overrides,
        rack=overrides.get("broker.rack") or None,
    )
    try:
        asyncio.run(serve(config))
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    logging.getLogger(__name__).info("shutdown: event loop closed; exiting")
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    # Past this point the interpreter's finalization would run a full garbage collection
    # over the whole heap and tear down every module: seconds on a starved CPU (7.9 s
    # measured with three CPU burners on two cores, past the 4 s a stop may take), with
    # nothing left to save - the logs are closed and fsynced, the quorum resigned.
    os._exit(0)
