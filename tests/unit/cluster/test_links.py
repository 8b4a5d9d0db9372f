"""The link proxies of cluster/links.py, with real sockets on 127.0.0.1: bytes flow, a
partition holds them (without closing anything) and delivers them when it heals, a slow
broker's replication links add their delay, and the daemon follows faults.json."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import pytest_asyncio

from kafkalite.cluster.links import (
    FAULTS_FILE,
    LINKS_FILE,
    FaultState,
    Link,
    LinkProxy,
    load_faults,
    load_links,
    save_faults,
    save_links,
    serve_links,
)
from tests.support.ports import free_base_port

pytestmark = pytest.mark.unit

WAIT = 3.0  # the bound on every wait that should succeed
SILENCE = 0.3  # how long "nothing arrives" is watched


@dataclass
class Echo:
    """A target that echoes and records what it received and how many connections it saw."""

    port: int = 0
    received: bytearray = field(default_factory=bytearray)
    connections: int = 0
    closed: int = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while (data := await reader.read(65536)) and data != b"quit":
                self.received += data
                writer.write(data)
                await writer.drain()
        except ConnectionError:
            pass
        finally:
            self.closed += 1
            writer.close()


@pytest_asyncio.fixture
async def echo() -> AsyncIterator[Echo]:
    target = Echo()
    server = await asyncio.start_server(target.handle, "127.0.0.1", 0)
    target.port = server.sockets[0].getsockname()[1]
    try:
        yield target
    finally:
        server.close()


async def started(target_port: int, state: FaultState, kind: str = "replication") -> LinkProxy:
    """A running proxy for broker 2 reaching broker 1 (so broker 2 is the fetching side)."""
    for _ in range(5):  # a free port can be taken between the check and the bind
        proxy = LinkProxy(
            Link(2, 1, kind, free_base_port(), "127.0.0.1", target_port), lambda: state
        )
        try:
            await proxy.start()
        except OSError:
            continue
        return proxy
    raise RuntimeError("no port for the proxy")


@pytest_asyncio.fixture
async def state() -> FaultState:
    return FaultState()


@pytest_asyncio.fixture
async def proxy(echo: Echo, state: FaultState) -> AsyncIterator[LinkProxy]:
    running = await started(echo.port, state)
    try:
        yield running
    finally:
        await asyncio.wait_for(running.stop(), WAIT)


async def connect(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), WAIT)


async def round_trip(port: int, payload: bytes) -> bytes:
    reader, writer = await connect(port)
    try:
        writer.write(payload)
        return await asyncio.wait_for(reader.readexactly(len(payload)), WAIT)
    finally:
        writer.close()


async def timed_echo(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, payload: bytes
) -> float:
    started_at = time.monotonic()
    writer.write(payload)
    assert await asyncio.wait_for(reader.readexactly(len(payload)), WAIT) == payload
    return time.monotonic() - started_at


async def stays_silent(reader: asyncio.StreamReader, size: int) -> asyncio.Task[bytes]:
    """Start reading ``size`` bytes and check nothing arrives for SILENCE seconds. The read
    is a task, not a cancelled wait_for, so nothing it may have consumed is lost."""
    pending = asyncio.create_task(reader.readexactly(size))
    done, _ = await asyncio.wait({pending}, timeout=SILENCE)
    assert not done, "bytes crossed a partition"
    assert not reader.at_eof(), "a partition must not close the connection"
    return pending


async def until(condition: Callable[[], bool]) -> None:
    while not condition():
        await asyncio.sleep(0.01)


def link(src: int, dst: int, kind: str) -> Link:
    return Link(src, dst, kind, 1, "127.0.0.1", 2)


# --- the rules and the files --------------------------------------------------------


def test_an_isolated_broker_is_cut_off_in_both_directions() -> None:
    state = FaultState(isolated={3})
    assert state.blocked(link(3, 1, "controller"))
    assert state.blocked(link(1, 3, "replication"))
    assert not state.blocked(link(1, 2, "controller"))
    assert not FaultState().blocked(link(3, 1, "replication"))


def test_only_a_slow_brokers_own_fetching_is_delayed() -> None:
    state = FaultState(slow_ms={2: 200})
    assert state.delay_ms(link(2, 1, "replication")) == 200  # 2 fetching from its leader
    assert state.delay_ms(link(1, 2, "replication")) == 0  # others fetching from 2
    assert state.delay_ms(link(2, 1, "controller")) == 0  # the quorum is never slowed
    assert FaultState().delay_ms(link(2, 1, "replication")) == 0


def test_fault_state_json_round_trip() -> None:
    state = FaultState({3, 1}, {2: 200})
    assert FaultState.from_json(state.to_json()) == state
    assert FaultState.from_json({}) == FaultState()
    with pytest.raises(ValueError):
        FaultState.from_json({"isolated": 3})


def test_faults_file_round_trip_and_missing_file(tmp_path: Path) -> None:
    assert load_faults(tmp_path) == FaultState()
    save_faults(tmp_path, FaultState({2}, {3: 150}))
    assert load_faults(tmp_path) == FaultState({2}, {3: 150})
    assert sorted(p.name for p in tmp_path.iterdir()) == [FAULTS_FILE]  # no temporary left


def test_links_file_round_trip(tmp_path: Path) -> None:
    links = [
        Link(1, 2, "controller", 20300, "127.0.0.1", 20201),
        Link(2, 1, "replication", 20301, "127.0.0.1", 20000),
    ]
    save_links(tmp_path, links)
    assert load_links(tmp_path) == links
    assert sorted(p.name for p in tmp_path.iterdir()) == [LINKS_FILE]


# --- one proxy ----------------------------------------------------------------------


@pytest.mark.asyncio
async def test_bytes_round_trip_through_the_proxy(proxy: LinkProxy) -> None:
    assert await round_trip(proxy.link.listen_port, b"hello") == b"hello"
    big = os.urandom(3 * 1024 * 1024)  # many chunks, with backpressure on the way
    assert await round_trip(proxy.link.listen_port, big) == big


@pytest.mark.asyncio
async def test_a_partition_holds_bytes_and_delivers_them_when_it_heals(
    proxy: LinkProxy, state: FaultState, echo: Echo
) -> None:
    reader, writer = await connect(proxy.link.listen_port)
    try:
        assert await timed_echo(reader, writer, b"before") < 1
        state.isolated.add(1)
        writer.write(b"during")
        pending = await stays_silent(reader, 6)
        assert bytes(echo.received) == b"before"  # held on the way in, not just on the way back
        state.isolated.clear()
        assert await asyncio.wait_for(pending, WAIT) == b"during"
        assert await timed_echo(reader, writer, b"after") < 1  # the same connection lives on
    finally:
        writer.close()


@pytest.mark.asyncio
async def test_a_connection_opened_during_a_partition_works_after_it(
    proxy: LinkProxy, state: FaultState, echo: Echo
) -> None:
    state.isolated.add(2)
    reader, writer = await connect(proxy.link.listen_port)  # accepted: the SYN got through
    try:
        writer.write(b"hello")
        pending = await stays_silent(reader, 5)
        assert echo.connections == 0  # the target is not dialled until the partition heals
        state.isolated.clear()
        assert await asyncio.wait_for(pending, WAIT) == b"hello"
        assert echo.connections == 1
    finally:
        writer.close()


@pytest.mark.asyncio
async def test_a_slow_replication_link_delays_each_direction(
    proxy: LinkProxy, state: FaultState
) -> None:
    reader, writer = await connect(proxy.link.listen_port)
    try:
        assert await timed_echo(reader, writer, b"x") < 0.1
        state.slow_ms[2] = 200  # applies to the connection that already exists
        assert await timed_echo(reader, writer, b"y") >= 0.4 - 0.005  # 200 ms each way
        state.slow_ms[2] = 0
        assert await timed_echo(reader, writer, b"z") < 0.1
    finally:
        writer.close()


@pytest.mark.asyncio
async def test_a_controller_link_is_never_slowed(echo: Echo) -> None:
    state = FaultState(slow_ms={2: 300})
    proxy = await started(echo.port, state, kind="controller")
    try:
        reader, writer = await connect(proxy.link.listen_port)
        assert await timed_echo(reader, writer, b"x") < 0.1
        writer.close()
    finally:
        await asyncio.wait_for(proxy.stop(), WAIT)


@pytest.mark.asyncio
async def test_closing_one_side_closes_the_other(proxy: LinkProxy, echo: Echo) -> None:
    reader, writer = await connect(proxy.link.listen_port)
    assert await timed_echo(reader, writer, b"x") < 1
    writer.close()  # the client goes: the target sees its connection end
    await asyncio.wait_for(until(lambda: echo.closed == 1), WAIT)

    reader, writer = await connect(proxy.link.listen_port)
    writer.write(b"quit")  # the target goes: the client sees EOF
    assert await asyncio.wait_for(reader.read(10), WAIT) == b""
    writer.close()


@pytest.mark.asyncio
async def test_a_refused_target_closes_the_client_connection() -> None:
    base = free_base_port()
    proxy = await started(base + 100, FaultState())  # nothing listens on base + 100
    try:
        reader, writer = await connect(proxy.link.listen_port)
        assert await asyncio.wait_for(reader.read(10), WAIT) == b""
        writer.close()
    finally:
        await asyncio.wait_for(proxy.stop(), WAIT)


@pytest.mark.asyncio
async def test_stop_closes_held_connections_and_frees_the_port(echo: Echo) -> None:
    state = FaultState(isolated={1})
    proxy = await started(echo.port, state)
    reader, writer = await connect(proxy.link.listen_port)
    await asyncio.wait_for(proxy.stop(), WAIT)
    assert await asyncio.wait_for(reader.read(10), WAIT) == b""
    writer.close()
    await proxy.start()  # the port can be listened on again at once
    await asyncio.wait_for(proxy.stop(), WAIT)


# --- the daemon ---------------------------------------------------------------------


async def reachable(port: int) -> None:
    """Until the daemon listens (it starts asynchronously)."""
    while True:
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            await asyncio.sleep(0.02)
            continue
        writer.close()
        return


@pytest.mark.asyncio
async def test_serve_links_follows_faults_json(tmp_path: Path, echo: Echo) -> None:
    port = free_base_port()
    save_links(tmp_path, [Link(2, 1, "controller", port, "127.0.0.1", echo.port)])
    serving = asyncio.create_task(serve_links(tmp_path, poll_interval_s=0.02))
    try:
        await asyncio.wait_for(reachable(port), WAIT)
        reader, writer = await connect(port)
        assert await timed_echo(reader, writer, b"ok") < 1

        save_faults(tmp_path, FaultState(isolated={2}))
        await asyncio.sleep(0.2)  # several polls
        writer.write(b"cut")
        pending = await stays_silent(reader, 3)

        (tmp_path / FAULTS_FILE).write_text('{"isolated": [')  # a torn write
        await asyncio.sleep(0.1)
        assert not pending.done()  # the last good state (isolated) stands

        save_faults(tmp_path, FaultState())
        assert await asyncio.wait_for(pending, WAIT) == b"cut"
        writer.close()
    finally:
        serving.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(serving, WAIT)
    with pytest.raises(OSError):  # the proxies are gone
        await asyncio.open_connection("127.0.0.1", port)


@pytest.mark.asyncio
async def test_the_daemon_process_exits_cleanly_on_sigterm(tmp_path: Path, echo: Echo) -> None:
    port = free_base_port()
    save_links(tmp_path, [Link(1, 2, "replication", port, "127.0.0.1", echo.port)])
    daemon = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "kafkalite.cluster.links", "--dir", str(tmp_path),
        cwd=Path(__file__).resolve().parents[3],
    )  # fmt: skip
    try:
        await asyncio.wait_for(reachable(port), 10)
        assert await round_trip(port, b"ping") == b"ping"
        daemon.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(daemon.wait(), WAIT) == 0
    finally:
        if daemon.returncode is None:
            daemon.kill()
            await daemon.wait()
