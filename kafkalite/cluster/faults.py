"""Network faults between local brokers: one TCP proxy per directed link.

Brokers of a local cluster never connect to each other directly. Broker ``src`` reaches
broker ``dst``'s controller listener (the quorum, heartbeats) and its client listener (for
replication fetches) through a proxy port owned by this module's daemon, one port per
``(src, dst, kind)``. ``faults.json`` in the cluster directory says which brokers are
isolated and which are slow; the daemon re-reads it as it changes, so ``kafkalite isolate
2`` in one shell takes effect at once in another. Each write carries a ``generation``; the
daemon writes the generation it obeys to ``faults.applied``, and a fault verb returns once
its generation is obeyed, not after a guessed pause: on a loaded machine the daemon may
take longer to run than any pause a caller would pick.

- *isolate*: the broker keeps running and serving its clients, but no byte moves on any
  link from or to it. Connections are not reset (a partition sends no RST): data is held
  and delivered when the fault heals, so peers see timeouts, as on a real network.
- a broker that dies (``kill``) has its connections closed by its operating system, and
  the proxies pass the close (or reset) on to the other end at once: that is how the
  active controller knows a killed broker at once. Behind a partition they hold it, as
  they hold everything, until it heals; and what a connection's end had sent into the cut
  before it ended is dropped with it, never delivered: a crashed broker's last answer
  (a Fetch response with records only it had) must not reach a follower after the heal.
- *slow*: every chunk on the broker's replication links (it fetching from leaders) is
  delivered ``slow_ms`` late; throughput is unchanged, latency grows, and the follower
  falls behind under load.
- *partial partition*: only the broker's replication links are cut, both ways (it cannot
  fetch from its leaders, its followers cannot fetch from it), while its controller links
  stay up: it keeps its session with the controller quorum. A leader cut off this way is
  not fenced; it shrinks its ISR to itself through the controller and, with
  ``min.insync.replicas=1``, acknowledges ``acks=all`` writes alone (the 2013 Jepsen
  analysis of Kafka 0.8, which led to ``min.insync.replicas``). ``isolate`` cuts the
  controller links too, which is why an isolated leader cannot shrink its ISR.

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
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)
SLOW_CONNECT_S = 1.0
"""A proxy's connection to its target taking this long is logged."""

LINKS_FILE = "links.json"
FAULTS_FILE = "faults.json"
APPLIED_FILE = "faults.applied"
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
    partially_partitioned: set[int] = field(default_factory=set)
    """Brokers whose replication links are cut, their controller links kept."""

    def blocked(self, link: Link) -> bool:
        ends = (link.src, link.dst)
        if any(b in self.isolated for b in ends):
            return True
        return link.kind == "replication" and any(b in self.partially_partitioned for b in ends)

    def heal(self, broker_id: int | None) -> None:
        """Undo isolate, slow and partial partition for one broker (None: every broker)."""
        if broker_id is None:
            self.isolated.clear()
            self.slow_ms.clear()
            self.partially_partitioned.clear()
        else:
            self.isolated.discard(broker_id)
            self.slow_ms.pop(broker_id, None)
            self.partially_partitioned.discard(broker_id)

    def delay_ms(self, link: Link) -> int:
        """Only the slow broker's own fetching is delayed, not the quorum."""
        return self.slow_ms.get(link.src, 0) if link.kind == "replication" else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "isolated": sorted(self.isolated),
            "slow_ms": {str(k): v for k, v in sorted(self.slow_ms.items())},
            "partially_partitioned": sorted(self.partially_partitioned),
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> FaultState:
        return cls(
            {int(b) for b in raw.get("isolated", [])},
            {int(k): int(v) for k, v in raw.get("slow_ms", {}).items()},
            {int(b) for b in raw.get("partially_partitioned", [])},
        )


def _write_atomically(path: Path, body: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(body)
    os.replace(tmp, path)


def save_links(root: Path, links: list[Link]) -> None:
    _write_atomically(root / LINKS_FILE, json.dumps([asdict(k) for k in links], indent=1))


def load_links(root: Path) -> list[Link]:
    return [Link(**raw) for raw in json.loads((root / LINKS_FILE).read_text())]


def fault_file_text(state: FaultState, generation: int) -> str:
    return json.dumps({**state.to_json(), "generation": generation})


def generation_of(raw: dict[str, Any]) -> int:
    """The generation a ``faults.json`` carries (0 for a file written before generations)."""
    return int(raw.get("generation", 0))


def save_faults(root: Path, state: FaultState) -> int:
    """Write ``state`` as the next generation and return that generation."""
    try:
        generation = generation_of(json.loads((root / FAULTS_FILE).read_text())) + 1
    except (FileNotFoundError, ValueError):
        generation = 1
    _write_atomically(root / FAULTS_FILE, fault_file_text(state, generation))
    return generation


def load_faults(root: Path) -> FaultState:
    try:
        return FaultState.from_json(json.loads((root / FAULTS_FILE).read_text()))
    except FileNotFoundError:
        return FaultState()


def applied_generation(text: str | None) -> int:
    """The generation the daemon obeys, from ``faults.applied``'s text (None: no file yet)."""
    try:
        return int(text) if text else 0
    except ValueError:  # never torn (written atomically); a foreign file obeys nothing
        return 0


APPLY_TIMEOUT_S = 30.0
"""A bound for a hung daemon, not a wait: the daemon answers as soon as it runs."""


def await_applied(
    read_applied: Callable[[], int],
    generation: int,
    poll_s: float,
    timeout_s: float = APPLY_TIMEOUT_S,
) -> bool:
    """Wait until the daemon obeys ``generation`` (``read_applied`` reads what it obeys);
    False if it did not within ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while read_applied() < generation:
        if time.monotonic() > deadline:
            return False
        time.sleep(poll_s)
    return True


class LinkProxy:
    """Forwards one directed link, obeying the current fault state on every chunk.

    Built on asyncio protocols, not streams: a chunk on a healthy link is written to the
    other socket from the callback that received it, with no task, queue or extra loop
    pass, since every heartbeat and quorum fetch of an idle cluster crosses here (the
    stream version cost an idle cluster 1.2% of a core). Chunks are held only while the
    link is blocked or slowed (``_Pipe``)."""

    def __init__(
        self, link: Link, state: Callable[[], FaultState], host: str = "127.0.0.1"
    ) -> None:
        self.link = link
        self.state = state
        self.host = host
        self._server: asyncio.Server | None = None
        self._connections: set[_Connection] = set()

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(
            lambda: _Side(self._accepted), self.host, self.link.listen_port, reuse_address=True
        )

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for connection in list(self._connections):
            connection.close()

    def blocked(self) -> bool:
        return self.state().blocked(self.link)

    def delay_s(self) -> float:
        return self.state().delay_ms(self.link) / 1000

    def _accepted(self, client: _Side) -> None:
        connection = _Connection(self, client)
        self._connections.add(connection)
        connection.open()

    def forget(self, connection: _Connection) -> None:
        self._connections.discard(connection)

    def held(self) -> list[bytes]:
        """The chunks this link holds now, both ways (a cut or slow link holds them; an
        empty chunk is a connection's end)."""
        return [chunk for connection in self._connections for chunk in connection.held()]


class _Side(asyncio.Protocol):
    """One socket of a proxied connection: what it receives goes into ``pipe``, and
    ``feeding`` is the pipe that writes to it."""

    def __init__(self, on_connected: Callable[[_Side], None] | None = None) -> None:
        self._on_connected = on_connected
        self.transport: asyncio.Transport | None = None
        self.pipe: _Pipe | None = None
        self.feeding: _Pipe | None = None
        self.early: list[bytes] = []
        """Received before the other end was connected (none: reading waits for it)."""
        self.on_lost: Callable[[], None] = lambda: None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        if self._on_connected is not None:
            self._on_connected(self)

    def data_received(self, data: bytes) -> None:
        if self.pipe is None:
            self.early.append(data)
        else:
            self.pipe.push(data)

    def eof_received(self) -> bool:
        self.data_received(b"")
        return True  # stay open: the pipe closes the other socket after the rest

    def connection_lost(self, exc: Exception | None) -> None:
        if self.pipe is not None:
            self.pipe.push(b"")
        if self.feeding is not None:
            self.feeding.sink_lost()
        self.on_lost()

    def pause_writing(self) -> None:
        if self.feeding is not None:
            self.feeding.sink_full(True)

    def resume_writing(self) -> None:
        if self.feeding is not None:
            self.feeding.sink_full(False)


class _Connection:
    """A client's connection to the listen port and the proxy's own to the target."""

    def __init__(self, proxy: LinkProxy, client: _Side) -> None:
        self.proxy = proxy
        self.client = client
        self.target: _Side | None = None
        self._connecting: asyncio.Task[None] | None = None
        self._open_sides = 1
        client.on_lost = self._side_lost

    def open(self) -> None:
        """A partition lets the SYN through, nothing else: the target is connected (and
        the client read) once the link is not blocked."""
        assert self.client.transport is not None
        self.client.transport.pause_reading()
        self._connecting = asyncio.get_running_loop().create_task(self._connect())

    async def _connect(self) -> None:
        while self.proxy.blocked():
            await asyncio.sleep(POLL_S)
        link = self.proxy.link
        loop = asyncio.get_running_loop()
        started = loop.time()
        try:
            transport, target = await loop.create_connection(
                _Side, link.target_host, link.target_port
            )
        except OSError as exc:
            self._log_slow(loop.time() - started, f"failed: {exc}")
            self.close()
            return
        self._log_slow(loop.time() - started, "connected")
        client = self.client.transport
        assert client is not None
        if client.is_closing():
            transport.close()
            return
        self.target = target
        self._open_sides += 1
        target.on_lost = self._side_lost
        upstream = _Pipe(self.proxy, client, transport, reading=False)
        downstream = _Pipe(self.proxy, transport, client, reading=True)
        self.client.pipe, target.feeding = upstream, upstream
        target.pipe, self.client.feeding = downstream, downstream
        for data in self.client.early:
            upstream.push(data)
        self.client.early.clear()
        upstream.update_reading()

    def _log_slow(self, took_s: float, outcome: str) -> None:
        """A connection to the target that took long is news (a refused one, while a broker
        is down, is not): its client's requests waited meanwhile, unanswered."""
        if took_s >= SLOW_CONNECT_S:
            link = self.proxy.link
            log.info(
                "link %d -> %d (%s) to %s:%d: %s after %.1f s",
                link.src,
                link.dst,
                link.kind,
                link.target_host,
                link.target_port,
                outcome,
                took_s,
            )

    def close(self) -> None:
        """Close both sockets now (the daemon stops, or the target cannot be reached)."""
        if self._connecting is not None and not self._connecting.done():
            self._connecting.cancel()
        for side in (self.client, self.target):
            if side is not None and side.transport is not None:
                side.transport.close()
        if self.target is None:
            self.proxy.forget(self)

    def held(self) -> list[bytes]:
        pipes = (side.pipe for side in (self.client, self.target) if side is not None)
        return [chunk for pipe in pipes if pipe is not None for chunk in pipe.held()]

    def _side_lost(self) -> None:
        self._open_sides -= 1
        if self._open_sides == 0:
            self.proxy.forget(self)


class _Pipe:
    """One direction of a proxied connection. A chunk goes straight through unless the link
    is blocked (held, and the source not read, until it heals) or slowed (held until its
    due time), so a delay adds latency without capping throughput. An empty chunk is the
    end of the stream: once everything before it is delivered, the sink is closed too."""

    def __init__(
        self,
        proxy: LinkProxy,
        source: asyncio.Transport,
        sink: asyncio.Transport,
        *,
        reading: bool,
    ) -> None:
        self.proxy = proxy
        self.source = source
        self.sink = sink
        self._reading = reading
        self._sink_full = False
        self._held: deque[tuple[float, bytes]] = deque()  # (due, chunk)
        self._timer: asyncio.TimerHandle | None = None
        self._loop = asyncio.get_running_loop()

    def push(self, data: bytes) -> None:
        if not data and self.proxy.blocked():
            # the source ended behind the cut (its process died, or closed the socket):
            # what the cut held from it dies with it, as a crashed machine's unsent bytes
            # do; only the end of the stream is passed on when the link heals
            self._held.clear()
        delay = self.proxy.delay_s()
        if not self._held and not delay and not self.proxy.blocked():
            self._deliver(data)
            return
        self._held.append((self._loop.time() + delay, data))
        if self._timer is None:
            self._flush()
        else:
            self.update_reading()

    def held(self) -> list[bytes]:
        return [chunk for _, chunk in self._held]

    def sink_full(self, full: bool) -> None:
        self._sink_full = full
        self.update_reading()

    def sink_lost(self) -> None:
        """Nothing can be written any more (the other end was closed or reset: a killed
        process's sockets are): the source goes too, so that its end learns of it, as
        the active controller does of a killed broker. A partition passes nothing, not
        even this: while the link is blocked the source stays open, and is closed when
        it heals."""
        self._held.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.proxy.blocked():
            self._loop.call_later(POLL_S, self.sink_lost)
        else:
            self.source.close()

    def _flush(self) -> None:
        self._timer = None
        blocked = self.proxy.blocked()
        now = self._loop.time()
        while self._held and not blocked and self._held[0][0] <= now:
            self._deliver(self._held.popleft()[1])
        if self._held:
            due = now + POLL_S if blocked else self._held[0][0]
            self._timer = self._loop.call_at(due, self._flush)
        self.update_reading()

    def _deliver(self, data: bytes) -> None:
        if self.sink.is_closing():
            return
        if data:
            self.sink.write(data)
        else:
            self.sink.close()  # after what it still buffers

    def update_reading(self) -> None:
        """Read the source unless the sink is full or too much is held. A cut link reads
        on (up to ``QUEUED_CHUNKS``) and holds what it reads, passing nothing: so it
        sees its source end, and drops what that source had sent into the cut."""
        wanted = not self._sink_full and len(self._held) < QUEUED_CHUNKS
        if wanted != self._reading and not self.source.is_closing():
            self._reading = wanted
            if wanted:
                self.source.resume_reading()
            else:
                self.source.pause_reading()


class FaultFile:
    """``faults.json``, re-read when it changes; a missing or torn file keeps the last
    good state. Changes are found by content (a small file, read when told or once a
    second), not by its time stamp, which a file system with coarse stamps would repeat
    for two same-sized writes (isolate 1, then 2) within one tick."""

    def __init__(self, root: Path) -> None:
        self.path = root / FAULTS_FILE
        self.current = FaultState()
        self.generation = 0
        self._text: str | None = None

    def refresh(self) -> bool:
        """Re-read the file; True if it brought a new state to obey."""
        try:
            text = self.path.read_text()
        except OSError:
            return False
        if text == self._text:
            return False
        try:
            raw = json.loads(text)
            self.current, self.generation = FaultState.from_json(raw), generation_of(raw)
        except ValueError:
            return False
        self._text = text
        return True

    def acknowledge(self) -> None:
        """Say which generation is obeyed, for the fault verb waiting on it."""
        _write_atomically(self.path.with_name(APPLIED_FILE), str(self.generation))


async def serve_links(
    root: Path,
    poll_interval_s: float = 0.05,
    host: str = "127.0.0.1",
    changed: asyncio.Event | None = None,
) -> None:
    """Serve every link of ``links.json`` on ``host`` (a container's proxies listen on
    every interface: the brokers reach them over the course network). ``faults.json`` is
    re-read every ``poll_interval_s`` and whenever ``changed`` is set."""
    faults = FaultFile(root)
    faults.refresh()
    proxies = [LinkProxy(link, lambda: faults.current, host) for link in load_links(root)]
    for proxy in proxies:
        await proxy.start()
    faults.acknowledge()
    changed = changed or asyncio.Event()
    try:
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(poll_interval_s):
                    await changed.wait()
            changed.clear()
            if faults.refresh():  # each chunk reads faults.current: obeyed from here on
                faults.acknowledge()
    finally:
        for proxy in proxies:
            await proxy.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kafkalite.cluster.link_proxies")
    parser.add_argument("--dir", required=True)
    parser.add_argument("--host", default="127.0.0.1", help="address the proxies listen on")
    parser.add_argument(
        "--poll-ms",
        type=int,
        default=50,
        help="re-read faults.json this often (and at once on SIGHUP)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)

    async def run() -> None:
        changed = asyncio.Event()
        task = asyncio.create_task(
            serve_links(Path(args.dir), args.poll_ms / 1000, args.host, changed)
        )
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        loop.add_signal_handler(signal.SIGHUP, changed.set)
        with contextlib.suppress(asyncio.CancelledError):
            await task

    asyncio.run(run())
    return 0
