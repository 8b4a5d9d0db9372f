"""The network-fault layer of a lab cluster: one TCP proxy per directed link.

Brokers of a local cluster never connect to each other directly. Every directed link
"broker ``src`` reaches broker ``dst``" of a kind (``controller``: the quorum and heartbeats;
``replication``: follower fetches) goes through its own proxy port on 127.0.0.1, and one
daemon (``python -m kafkalite.cluster.links --dir DIR``) runs all of them. That is how
``isolate`` and ``slow`` work without root, iptables or tc: the supervisor writes
``links.json`` before starting the daemon, and the CLI or Python API rewrites
``faults.json`` at any time; the daemon re-reads it as it changes, so a fault injected in
one shell takes effect at once on connections that already exist.

What students observe, per link:

- *normal*: bytes are copied both ways in large chunks, with backpressure.
- *blocked* (``src`` or ``dst`` isolated): a partition, not a crash. Nothing is closed or
  reset (a real partition sends no RST); bytes already read are held, nothing more is read,
  and everything is delivered, in order, once the partition heals. Peers see timeouts.
- *delayed* (``src`` slow, replication links only): each chunk is delivered ``slow_ms``
  after it was read, in order, so the slow follower's fetches take longer and it falls
  behind under load while the quorum (controller links) stays healthy.

Clients' own connections are never proxied: an isolated leader still answers producers,
which is exactly the split-brain lesson.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

LINKS_FILE = "links.json"
FAULTS_FILE = "faults.json"

# Large reads keep replication cheap: one read/write/drain per 256 KiB, never per byte.
CHUNK = 256 * 1024
# Chunks read but not yet delivered, per direction: at most 8 MiB buffered while a delay
# or a partition holds them; beyond that the reader waits, and TCP pushes back on the sender.
QUEUED_CHUNKS = 32
# How often a held connection re-asks the state whether the partition has healed. The
# state callable is cheap (an attribute read), so this is small next to the daemon's
# faults.json poll, which dominates how fast a heal is seen.
HOLD_POLL_S = 0.01


@dataclass(frozen=True, slots=True)
class Link:
    """Broker ``src`` reaching broker ``dst`` for ``kind`` traffic, via ``listen_port``."""

    src: int  # broker id that opens the connection
    dst: int  # broker id being reached
    kind: str  # "controller" or "replication"
    listen_port: int  # the proxy's port on 127.0.0.1
    target_host: str
    target_port: int


@dataclass(slots=True)
class FaultState:
    """Which brokers are cut off and which are slow; the whole of ``faults.json``."""

    isolated: set[int] = field(default_factory=set)
    slow_ms: dict[int, int] = field(default_factory=dict)

    def blocked(self, link: Link) -> bool:
        """An isolated broker is cut off from every peer, in both directions."""
        return link.src in self.isolated or link.dst in self.isolated

    def delay_ms(self, link: Link) -> int:
        """Only a slow broker's own fetching is delayed (the follower falls behind); the
        quorum is never slowed, so slowness never turns into a spurious election."""
        if link.kind != "replication":
            return 0
        return max(0, self.slow_ms.get(link.src, 0))

    def to_json(self) -> dict[str, Any]:
        return {
            "isolated": sorted(self.isolated),
            "slow_ms": {str(b): ms for b, ms in sorted(self.slow_ms.items())},
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> FaultState:
        """Raises ValueError on a malformed document (e.g. a half-written one)."""
        isolated = raw.get("isolated", [])
        slow = raw.get("slow_ms", {})
        if not isinstance(isolated, list) or not isinstance(slow, dict):
            raise ValueError("faults: 'isolated' must be a list and 'slow_ms' an object")
        return cls({int(b) for b in isolated}, {int(b): int(ms) for b, ms in slow.items()})


def _write_atomically(path: Path, body: str) -> None:
    """Readers (the daemon polls) see the old file or the new one, never a torn one. The
    temporary name carries the pid so two writers (CLI and API) never share it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(body)
    os.replace(tmp, path)


def save_links(root: Path, links: list[Link]) -> None:
    _write_atomically(root / LINKS_FILE, json.dumps([asdict(link) for link in links], indent=1))


def load_links(root: Path) -> list[Link]:
    return [Link(**raw) for raw in json.loads((root / LINKS_FILE).read_text())]


def save_faults(root: Path, state: FaultState) -> None:
    _write_atomically(root / FAULTS_FILE, json.dumps(state.to_json()))


def load_faults(root: Path) -> FaultState:
    """No file means no faults: a fresh cluster is healthy."""
    try:
        return FaultState.from_json(json.loads((root / FAULTS_FILE).read_text()))
    except FileNotFoundError:
        return FaultState()


class LinkProxy:
    """Forwards one directed link, asking ``state`` before every read and every write, so a
    fault applies to connections that already exist, not just to new ones.

    A connection accepted while the link is blocked is held *before* the proxy connects
    to the target: the dialling broker sees an open socket that carries nothing (as if its
    SYN got through and everything after it was lost), the target sees no connection
    until the partition heals, and then the connection is made and held bytes flow.
    """

    def __init__(self, link: Link, state: Callable[[], FaultState]) -> None:
        self.link = link
        self._state = state
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._stopping = False

    async def start(self) -> None:
        """Listen on 127.0.0.1:listen_port. ``limit=CHUNK`` lets one read return a whole
        chunk rather than the 64 KiB a StreamReader buffers by default."""
        self._stopping = False
        self._server = await asyncio.start_server(
            self._handle, "127.0.0.1", self.link.listen_port, reuse_address=True, limit=CHUNK
        )

    async def stop(self) -> None:
        """Close the listener and every connection, held or not."""
        self._stopping = True
        server, self._server = self._server, None
        if server is not None:
            server.close()
        handlers = list(self._handlers)
        for task in handlers:
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)
        if server is not None:
            await server.wait_closed()

    def _blocked(self) -> bool:
        return self._state().blocked(self.link)

    async def _until_unblocked(self) -> None:
        while self._blocked():
            await asyncio.sleep(HOLD_POLL_S)

    async def _handle(
        self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            if self._stopping:  # accepted just as stop() ran: stop() did not see this task
                return
            await self._until_unblocked()
            try:
                target_reader, target_writer = await asyncio.open_connection(
                    self.link.target_host, self.link.target_port, limit=CHUNK
                )
            except OSError as exc:  # the target is down: the dialler sees a closed socket
                log.debug("link %s: cannot reach target: %s", self.link, exc)
                return
            try:
                await asyncio.gather(
                    self._pipe(client_reader, target_writer),
                    self._pipe(target_reader, client_writer),
                )
            finally:
                target_writer.close()
        finally:
            client_writer.close()
            self._handlers.discard(task)

    async def _pipe(self, src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
        """Copy one direction until either end closes, then close ``dst``.

        Two stages joined by a bounded queue: the reader stamps each chunk with its due
        time as it reads it, the writer delivers each no earlier than that. A delay thus
        adds latency to every chunk without serialising the chunks behind one another, and
        the queue bound plus ``drain()`` keep memory bounded. Closing ``dst`` ends the
        other direction too (its reader reads the same socket), after it has delivered
        what it already holds.
        """
        queue: asyncio.Queue[tuple[float, bytes]] = asyncio.Queue(QUEUED_CHUNKS)
        reading = asyncio.create_task(self._read(src, queue))
        loop = asyncio.get_running_loop()
        try:
            while True:
                due, data = await queue.get()
                if not data:
                    return
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                await self._until_unblocked()  # held bytes go out only once healed
                dst.write(data)
                await dst.drain()
        except OSError:  # reset or broken pipe on dst
            return
        finally:
            reading.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reading
            dst.close()

    async def _read(
        self, src: asyncio.StreamReader, queue: asyncio.Queue[tuple[float, bytes]]
    ) -> None:
        """Stop reading while blocked, so the sender's TCP window fills as in a partition.
        End of stream or an error on ``src`` is queued as an empty chunk, behind the data."""
        loop = asyncio.get_running_loop()
        while True:
            await self._until_unblocked()
            try:
                data = await src.read(CHUNK)
            except OSError:
                data = b""
            due = loop.time() + self._state().delay_ms(self.link) / 1000
            await queue.put((due, data))
            if not data:
                return


class _FaultsFile:
    """``faults.json`` re-read only when its mtime or size changes. A missing or torn file
    (a writer that does not replace atomically) keeps the last good state, and is retried
    on the next poll rather than trusted."""

    def __init__(self, root: Path) -> None:
        self.path = root / FAULTS_FILE
        self.current = FaultState()
        self._stamp: tuple[int, int] | None = None
        self._complained: tuple[int, int] | None = None

    def poll(self) -> None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return
        stamp = (st.st_mtime_ns, st.st_size)
        if stamp == self._stamp:
            return
        try:
            new = FaultState.from_json(json.loads(self.path.read_text()))
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            if stamp != self._complained:
                log.warning("ignoring unreadable %s (keeping the last state): %s", self.path, exc)
                self._complained = stamp
            return
        self._stamp = stamp
        if new != self.current:
            log.info("faults: isolated=%s slow_ms=%s", sorted(new.isolated), new.slow_ms)
        self.current = new


async def serve_links(root: Path, poll_interval_s: float = 0.05) -> None:
    """Run a proxy for every link of ``root``'s links.json until cancelled, re-reading
    faults.json every ``poll_interval_s``. Faults are read before the first proxy listens,
    so a cluster started with a broker isolated never leaks a byte."""
    faults = _FaultsFile(root)
    faults.poll()
    proxies = [LinkProxy(link, lambda: faults.current) for link in load_links(root)]
    try:
        for proxy in proxies:
            await proxy.start()
        log.info("serving %d links", len(proxies))
        while True:
            await asyncio.sleep(poll_interval_s)
            faults.poll()
    finally:
        for proxy in proxies:
            await proxy.stop()


async def _run(root: Path) -> int:
    serving = asyncio.create_task(serve_links(root))
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, serving.cancel)
    try:
        await serving
    except asyncio.CancelledError:
        return 0
    except (OSError, ValueError, TypeError) as exc:  # unreadable links.json, port taken
        log.error("cannot serve the links of %s: %s", root, exc)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kafkalite.cluster.links",
        description="Run the lab cluster's link proxies, obeying DIR/faults.json.",
    )
    parser.add_argument("--dir", required=True, type=Path, help="the cluster directory")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    return asyncio.run(_run(args.dir))


if __name__ == "__main__":
    raise SystemExit(main())
