"""Network faults between local brokers: one TCP proxy per directed link.

Brokers of a local cluster never connect to each other directly. Broker ``src`` reaches
broker ``dst``'s controller listener (the quorum, heartbeats) and its client listener (for
replication fetches) through a proxy port owned by this module's daemon, one port per
``(src, dst, kind)``. ``faults.json`` in the cluster directory says which brokers are
isolated and which are slow; the daemon re-reads it as it changes, so ``kafkalite isolate
2`` in one shell takes effect at once in another.

- *isolate*: the broker keeps running and serving its clients, but no byte moves on any
  link from or to it. Connections are not reset (a partition sends no RST): data is held
  and delivered when the fault heals, so peers see timeouts, as on a real network.
- *slow*: every chunk on the broker's replication links (it fetching from leaders) is
  delivered ``slow_ms`` late; throughput is unchanged, latency grows, and the follower
  falls behind under load.

Clients' own connections are never proxied: an isolated leader still answers producers,
which is exactly the lab's split-brain lesson.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

LINKS_FILE = "links.json"
FAULTS_FILE = "faults.json"
CHUNK = 256 * 1024
QUEUED_CHUNKS = 64
POLL_S = 0.02


@dataclass(frozen=True, slots=True)
class Link:
    src: int
    dst: int
    kind: str  # "controller" or "replication"
    listen_port: int
    target_host: str
    target_port: int


@dataclass(slots=True)
class FaultState:
    isolated: set[int] = field(default_factory=set)
    slow_ms: dict[int, int] = field(default_factory=dict)

    def blocked(self, link: Link) -> bool:
        return link.src in self.isolated or link.dst in self.isolated

    def heal(self, broker_id: int | None) -> None:
        """Undo isolate and slow for one broker (None: every broker)."""
        if broker_id is None:
            self.isolated.clear()
            self.slow_ms.clear()
        else:
            self.isolated.discard(broker_id)
            self.slow_ms.pop(broker_id, None)

    def delay_ms(self, link: Link) -> int:
        """Only the slow broker's own fetching is delayed, not the quorum."""
        return self.slow_ms.get(link.src, 0) if link.kind == "replication" else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "isolated": sorted(self.isolated),
            "slow_ms": {str(k): v for k, v in sorted(self.slow_ms.items())},
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> FaultState:
        return cls(
            {int(b) for b in raw.get("isolated", [])},
            {int(k): int(v) for k, v in raw.get("slow_ms", {}).items()},
        )


def _write_atomically(path: Path, body: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(body)
    os.replace(tmp, path)


def save_links(root: Path, links: list[Link]) -> None:
    _write_atomically(root / LINKS_FILE, json.dumps([asdict(k) for k in links], indent=1))


def load_links(root: Path) -> list[Link]:
    return [Link(**raw) for raw in json.loads((root / LINKS_FILE).read_text())]


def save_faults(root: Path, state: FaultState) -> None:
    _write_atomically(root / FAULTS_FILE, json.dumps(state.to_json()))


def load_faults(root: Path) -> FaultState:
    try:
        return FaultState.from_json(json.loads((root / FAULTS_FILE).read_text()))
    except FileNotFoundError:
        return FaultState()


class LinkProxy:
    """Forwards one directed link, obeying the current fault state on every chunk."""

    def __init__(
        self, link: Link, state: Callable[[], FaultState], host: str = "127.0.0.1"
    ) -> None:
        self.link = link
        self.state = state
        self.host = host
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(
            self._accept, self.host, self.link.listen_port, reuse_address=True
        )

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _while_blocked(self) -> None:
        while self.state().blocked(self.link):
            await asyncio.sleep(POLL_S)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            await self._while_blocked()  # a partition lets the SYN through, nothing else
            try:
                target_reader, target_writer = await asyncio.open_connection(
                    self.link.target_host, self.link.target_port
                )
            except OSError:
                return
            try:
                await asyncio.gather(
                    self._pump(reader, target_writer), self._pump(target_reader, writer)
                )
            finally:
                target_writer.close()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:
            pass  # the daemon stops: the connection's task ends quietly, as it began
        finally:
            writer.close()
            self._tasks.discard(task)

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Copy one direction: a reader stage (stops reading while blocked) feeding a writer
        stage (holds chunks while blocked, delivers each at its due time), so a delay adds
        latency without capping throughput."""
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue(QUEUED_CHUNKS)

        async def read() -> None:
            while True:
                await self._while_blocked()
                data = await reader.read(CHUNK)
                due = time.monotonic() + self.state().delay_ms(self.link) / 1000
                await queue.put((due, data))
                if not data:
                    return

        async def write() -> None:
            while True:
                due, data = await queue.get()
                if not data:
                    writer.close()
                    return
                await asyncio.sleep(max(0.0, due - time.monotonic()))
                await self._while_blocked()
                writer.write(data)
                await writer.drain()

        reading = asyncio.create_task(read())
        try:
            await write()
        finally:
            reading.cancel()
            reading.add_done_callback(_settled)  # its end (a reset) is the connection's
            with contextlib.suppress(asyncio.CancelledError, ConnectionError):
                await reading


def _settled(task: asyncio.Future[None]) -> None:
    if not task.cancelled():
        task.exception()


class FaultFile:
    """``faults.json``, re-read when it changes; a missing or torn file keeps the last
    good state."""

    def __init__(self, root: Path) -> None:
        self.path = root / FAULTS_FILE
        self.current = FaultState()
        self._stamp: tuple[int, int] | None = None

    def refresh(self) -> None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp == self._stamp:
            return
        try:
            self.current = FaultState.from_json(json.loads(self.path.read_text()))
            self._stamp = stamp
        except (ValueError, OSError):
            pass


async def serve_links(root: Path, poll_interval_s: float = 0.05, host: str = "127.0.0.1") -> None:
    """Serve every link of ``links.json`` on ``host`` (a container's proxies listen on
    every interface: the brokers reach them over the course network)."""
    faults = FaultFile(root)
    faults.refresh()
    proxies = [LinkProxy(link, lambda: faults.current, host) for link in load_links(root)]
    for proxy in proxies:
        await proxy.start()
    try:
        while True:
            await asyncio.sleep(poll_interval_s)
            faults.refresh()
    finally:
        for proxy in proxies:
            await proxy.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kafkalite.cluster.link_proxies")
    parser.add_argument("--dir", required=True)
    parser.add_argument("--host", default="127.0.0.1", help="address the proxies listen on")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)

    async def run() -> None:
        task = asyncio.create_task(serve_links(Path(args.dir), host=args.host))
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(run())
    return 0
