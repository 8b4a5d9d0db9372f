"""The fault layer's link proxy, with real sockets: bytes flow, are held by a partition
and delivered when it heals, and are delayed on a slow broker's replication links."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import time
from asyncio.subprocess import PIPE
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio

from kafkalite.cluster.faults import (
    APPLIED_FILE,
    FaultFile,
    FaultState,
    Link,
    LinkProxy,
    applied_generation,
    await_applied,
    load_faults,
    save_faults,
    save_links,
    serve_links,
)
from tests.support.ports import free_base_port

pytestmark = pytest.mark.unit


def free_port() -> int:
    """A free port of this xdist worker's slice, drawn at random: the first free port of a
    fixed range was the same for two workers checking at once (one of them then failed to
    listen: "address already in use", CI 2026-11-29 14:00)."""
    return free_base_port()


async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while data := await reader.read(65536):
        writer.write(data)
        await writer.drain()
    writer.close()


@pytest_asyncio.fixture
async def proxied() -> AsyncIterator[tuple[Link, FaultState]]:
    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    target = server.sockets[0].getsockname()[1]
    link = Link(2, 1, "replication", free_port(), "127.0.0.1", target)
    state = FaultState()
    proxy = LinkProxy(link, lambda: state)
    await proxy.start()
    try:
        yield link, state
    finally:
        await proxy.stop()
        server.close()


async def round_trip(link: Link, payload: bytes, timeout: float = 2.0) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", link.listen_port)
    try:
        writer.write(payload)
        return await asyncio.wait_for(reader.readexactly(len(payload)), timeout)
    finally:
        writer.close()


def test_fault_rules() -> None:
    state = FaultState({3}, {2: 200})
    assert state.blocked(Link(3, 1, "controller", 1, "h", 1))
    assert state.blocked(Link(1, 3, "replication", 1, "h", 1))
    assert not state.blocked(Link(1, 2, "controller", 1, "h", 1))
    assert state.delay_ms(Link(2, 1, "replication", 1, "h", 1)) == 200  # 2 fetching: slow
    assert state.delay_ms(Link(1, 2, "replication", 1, "h", 1)) == 0  # others fetching from 2
    assert state.delay_ms(Link(2, 1, "controller", 1, "h", 1)) == 0  # the quorum is not slowed
    assert FaultState.from_json(state.to_json()) == state


def test_a_partial_partition_cuts_replication_and_keeps_the_quorum() -> None:
    """Broker 1 cut from its replication peers: it fetches from no leader and no follower
    fetches from it, but its controller links (quorum, heartbeats, AlterPartition) stay."""
    state = FaultState(partially_partitioned={1})
    assert state.blocked(Link(1, 2, "replication", 1, "h", 1))  # 1 fetching from 2
    assert state.blocked(Link(3, 1, "replication", 1, "h", 1))  # 3 fetching from 1
    assert not state.blocked(Link(1, 2, "controller", 1, "h", 1))
    assert not state.blocked(Link(3, 1, "controller", 1, "h", 1))
    assert not state.blocked(Link(2, 3, "replication", 1, "h", 1))  # the others are not cut
    assert FaultState.from_json(state.to_json()) == state
    state.heal(1)
    assert not state.blocked(Link(1, 2, "replication", 1, "h", 1))
    assert FaultState.from_json({"isolated": [2]}).partially_partitioned == set()  # older file


def test_fault_file_round_trip_and_torn_writes(tmp_path: Path) -> None:
    assert load_faults(tmp_path) == FaultState()
    assert save_faults(tmp_path, FaultState({2})) == 1
    watched = FaultFile(tmp_path)
    assert watched.refresh()
    assert (watched.current.isolated, watched.generation) == ({2}, 1)
    assert not watched.refresh()  # nothing new
    (tmp_path / "faults.json").write_text("{torn")
    assert not watched.refresh()
    assert watched.current.isolated == {2}  # the last good state stays


def test_writes_of_the_same_size_in_one_clock_tick_are_each_seen(tmp_path: Path) -> None:
    """Changes are found by content, so a file system with coarse time stamps (ext3 and
    some bind mounts: one second) cannot hide "isolate 2" written right after the
    same-sized "isolate 1", as an (mtime, size) stamp could."""
    watched = FaultFile(tmp_path)
    for broker in (1, 2, 3):
        generation = save_faults(tmp_path, FaultState({broker}))
        assert watched.refresh()
        assert (watched.current.isolated, watched.generation) == ({broker}, generation)


def test_the_daemon_acknowledges_the_generation_it_obeys(tmp_path: Path) -> None:
    watched = FaultFile(tmp_path)
    assert applied_generation(None) == 0
    generation = save_faults(tmp_path, FaultState({1}))
    assert not await_applied(lambda: applied_generation(_applied_text(tmp_path)), 1, 0.001, 0.05)
    watched.refresh()
    watched.acknowledge()
    assert applied_generation(_applied_text(tmp_path)) == generation
    assert await_applied(lambda: applied_generation(_applied_text(tmp_path)), 1, 0.001, 0.05)


def _applied_text(root: Path) -> str | None:
    path = root / APPLIED_FILE
    return path.read_text() if path.exists() else None


@pytest.mark.asyncio
async def test_bytes_flow_both_ways(proxied: tuple[Link, FaultState]) -> None:
    link, _ = proxied
    payload = bytes(range(256)) * 2000
    assert await round_trip(link, payload) == payload


@pytest.mark.asyncio
async def test_a_partition_holds_bytes_and_delivers_them_when_it_heals(
    proxied: tuple[Link, FaultState],
) -> None:
    link, state = proxied
    reader, writer = await asyncio.open_connection("127.0.0.1", link.listen_port)
    writer.write(b"before")
    assert await asyncio.wait_for(reader.readexactly(6), 2) == b"before"
    state.isolated.add(1)
    writer.write(b"during")
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(reader.readexactly(6), 0.3)  # no RST, just silence
    state.isolated.clear()
    assert await asyncio.wait_for(reader.readexactly(6), 2) == b"during"
    writer.close()


@pytest.mark.asyncio
async def test_a_connection_opened_during_a_partition_works_after_it(
    proxied: tuple[Link, FaultState],
) -> None:
    link, state = proxied
    state.isolated.add(2)
    pending = asyncio.create_task(round_trip(link, b"hello", timeout=3))
    await asyncio.sleep(0.3)
    assert not pending.done()
    state.isolated.clear()
    assert await pending == b"hello"


@pytest.mark.asyncio
async def test_a_slow_link_adds_its_delay(proxied: tuple[Link, FaultState]) -> None:
    link, state = proxied
    started = time.monotonic()
    await round_trip(link, b"x")
    fast = time.monotonic() - started
    state.slow_ms[2] = 200
    started = time.monotonic()
    await round_trip(link, b"x")
    slow = time.monotonic() - started
    assert fast < 0.15
    assert slow >= 0.4  # 200 ms each way


@pytest.mark.asyncio
async def test_a_large_transfer_through_a_slow_link_arrives_whole_and_in_order(
    proxied: tuple[Link, FaultState],
) -> None:
    link, state = proxied
    state.slow_ms[2] = 20  # every chunk held, in both directions
    payload = bytes(range(256)) * 40_000  # 10 MiB: the sockets' buffers fill up
    assert await round_trip(link, payload, timeout=20) == payload


@pytest.mark.asyncio
async def test_either_end_closing_closes_the_other() -> None:
    accepted: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()

    async def keep(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await accepted.put((reader, writer))

    server = await asyncio.start_server(keep, "127.0.0.1", 0)
    link = Link(2, 1, "controller", free_port(), "127.0.0.1", server.sockets[0].getsockname()[1])
    proxy = LinkProxy(link, FaultState)
    await proxy.start()
    try:
        # the target ends the connection after a last answer: the client gets it, then EOF
        client_reader, client_writer = await asyncio.open_connection("127.0.0.1", link.listen_port)
        client_writer.write(b"ask")
        target_reader, target_writer = await asyncio.wait_for(accepted.get(), 2)
        assert await asyncio.wait_for(target_reader.readexactly(3), 2) == b"ask"
        target_writer.write(b"last")
        target_writer.close()
        assert await asyncio.wait_for(client_reader.read(), 2) == b"last"
        client_writer.close()
        # the client ends it: the target reads EOF
        client_reader, client_writer = await asyncio.open_connection("127.0.0.1", link.listen_port)
        client_writer.write(b"bye")
        client_writer.close()
        target_reader, target_writer = await asyncio.wait_for(accepted.get(), 2)
        assert await asyncio.wait_for(target_reader.read(), 2) == b"bye"
        target_writer.close()
        await asyncio.sleep(0.1)
        assert not proxy._connections  # nothing kept for closed connections
    finally:
        await proxy.stop()
        server.close()


CONNECT_AND_WAIT = """
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"hello")
print("connected", flush=True)
time.sleep(60)
"""
"""A broker's process, as far as its connection to the controller goes: it never reads
what it is sent, so when it is killed its operating system resets the connection."""

Accepted = asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]]


@pytest_asyncio.fixture
async def controller_link() -> AsyncIterator[tuple[Link, FaultState, Accepted]]:
    """A controller listener behind broker 2's link to it; the test gets each connection
    the listener accepts."""
    accepted: Accepted = asyncio.Queue()

    async def keep(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await accepted.put((reader, writer))

    server = await asyncio.start_server(keep, "127.0.0.1", 0)
    link = Link(2, 1, "controller", free_port(), "127.0.0.1", server.sockets[0].getsockname()[1])
    state = FaultState()
    proxy = LinkProxy(link, lambda: state)
    await proxy.start()
    try:
        yield link, state, accepted
    finally:
        await proxy.stop()
        server.close()


async def a_broker_process(
    link: Link, accepted: Accepted
) -> tuple[asyncio.subprocess.Process, asyncio.StreamReader, asyncio.StreamWriter]:
    """A process connected through ``link``, and the controller's end of its connection,
    with an answer waiting unread at the process (so its death resets the connection)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CONNECT_AND_WAIT, str(link.listen_port), stdout=PIPE
    )
    assert process.stdout is not None
    assert await asyncio.wait_for(process.stdout.readline(), 10) == b"connected\n"
    reader, writer = await asyncio.wait_for(accepted.get(), 5)
    assert await asyncio.wait_for(reader.readexactly(5), 5) == b"hello"
    writer.write(b"an answer it will never read")
    await writer.drain()
    await asyncio.sleep(0.1)  # through the proxy, into the process's socket
    return process, reader, writer


@pytest.mark.asyncio
@pytest.mark.parametrize("killed_with", [signal.SIGKILL, signal.SIGTERM])
async def test_a_dead_brokers_connection_closes_at_the_controller(
    controller_link: tuple[Link, FaultState, Accepted], killed_with: signal.Signals
) -> None:
    """The controller fences a broker at once when its connection closes: the operating
    system closes (here: resets) a dead process's sockets, and the proxy passes it on."""
    link, _state, accepted = controller_link
    process, reader, writer = await a_broker_process(link, accepted)
    process.send_signal(killed_with)
    await process.wait()
    with contextlib.suppress(ConnectionResetError):
        assert await asyncio.wait_for(reader.read(), 5) == b""
    writer.close()


@pytest.mark.asyncio
async def test_an_isolated_brokers_death_is_not_passed_on_until_the_network_heals(
    controller_link: tuple[Link, FaultState, Accepted],
) -> None:
    """A network partition passes nothing, not even the reset of a process that died
    behind it: isolated, a broker is judged by its session, as if it were only silent.
    (Seen before the fix: the proxy closed the controller's end at once.)"""
    link, state, accepted = controller_link
    process, reader, writer = await a_broker_process(link, accepted)
    state.isolated.add(2)
    process.kill()
    await process.wait()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(reader.read(1), 0.5)
    state.heal(2)
    with contextlib.suppress(ConnectionResetError):
        assert await asyncio.wait_for(reader.read(), 5) == b""  # passed on once healed
    writer.close()


@pytest.mark.asyncio
async def test_the_daemon_rereads_faults_json_when_told_not_only_when_it_polls(
    tmp_path: Path,
) -> None:
    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    link = Link(2, 1, "controller", free_port(), "127.0.0.1", server.sockets[0].getsockname()[1])
    save_links(tmp_path, [link])
    save_faults(tmp_path, FaultState())
    changed = asyncio.Event()  # what SIGHUP sets in the daemon
    daemon = asyncio.create_task(serve_links(tmp_path, 60, changed=changed))
    try:
        for _ in range(100):  # until it listens
            with contextlib.suppress(OSError):
                assert await round_trip(link, b"up") == b"up"
                break
            await asyncio.sleep(0.02)
        generation = save_faults(tmp_path, FaultState({1}))
        changed.set()

        def applied() -> int:
            return applied_generation(_applied_text(tmp_path))

        assert await asyncio.to_thread(await_applied, applied, generation, 0.005, 5)
        with pytest.raises(TimeoutError):
            await round_trip(link, b"cut", timeout=0.3)
    finally:
        daemon.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await daemon
        server.close()


SEND_WHEN_TOLD = """
import socket, sys, time
if sys.argv[1] == "connects":
    s = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
else:
    server = socket.create_server(("127.0.0.1", 0))
    print(server.getsockname()[1], flush=True)
    s, _ = server.accept()
print("connected", flush=True)
sys.stdin.readline()
s.sendall(b"pay-11")
print("sent", flush=True)
time.sleep(60)
"""
"""A broker's process at one end of a link: it sends its last answer when told, then is
killed (it ``connects``, as a follower fetching; or it ``accepts``, as a leader answering)."""


@pytest.mark.asyncio
@pytest.mark.parametrize("dead_end", ["connects", "accepts"])
async def test_what_a_broker_sent_into_a_cut_dies_with_it(dead_end: str) -> None:
    """The lead's finding (lab 03): broker 1, isolated, answered broker 2's Fetch with a
    record only it had, and was killed; the proxy held the answer and delivered it when
    the network healed, so broker 2 appended a record from a dead leader and the lab's
    lost write survived. What an end sent into the cut is dropped when that end dies:
    the other end gets only the close."""
    accepted: Accepted = asyncio.Queue()

    async def keep(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await accepted.put((reader, writer))

    server = await asyncio.start_server(keep, "127.0.0.1", 0)
    listen = free_port()

    async def end() -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-c", SEND_WHEN_TOLD, dead_end, str(listen), stdin=PIPE, stdout=PIPE
        )

    # the accepting end is started first (the proxy needs its port), the connecting end
    # once the proxy listens (it connects at once: started before, it was refused in CI)
    process = await end() if dead_end == "accepts" else None
    if process is not None:
        assert process.stdout is not None
        target = int(await asyncio.wait_for(process.stdout.readline(), 10))
    else:
        target = server.sockets[0].getsockname()[1]
    state = FaultState()
    proxy = LinkProxy(Link(2, 1, "replication", listen, "127.0.0.1", target), lambda: state)
    await proxy.start()
    if process is None:
        process = await end()
    assert process.stdin is not None and process.stdout is not None
    try:
        if dead_end == "accepts":
            reader, writer = await asyncio.open_connection("127.0.0.1", listen)
        else:
            reader, writer = await asyncio.wait_for(accepted.get(), 10)
        assert await asyncio.wait_for(process.stdout.readline(), 10) == b"connected\n"
        state.partially_partitioned.add(1)
        process.stdin.write(b"go\n")
        await wait_until(lambda: proxy.held() == [b"pay-11"], "the cut to hold the answer")
        process.kill()
        await process.wait()
        await wait_until(lambda: b"" in proxy.held(), "the cut to hold the connection's end")
        state.heal(1)
        with contextlib.suppress(ConnectionResetError):
            assert await asyncio.wait_for(reader.read(), 5) == b""
        writer.close()
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await proxy.stop()
        server.close()


async def wait_until(condition: Callable[[], bool], what: str, timeout_s: float = 5) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout_s} s for {what}"
        await asyncio.sleep(0.01)
