"""A peer that is gone is told apart from one that is slow, on real loopback sockets
(``network.client``; no broker runs here).

The metadata quorum stops naming (and listing) a leader it finds gone - connection refused
or reset, as after a kill - but not one that is merely slow to answer: under load that
would make clients' metadata flap.
"""

from __future__ import annotations

import asyncio
import socket

import pytest
from kio.schema.api_versions.v4.request import ApiVersionsRequest

from kafkalite.network.client import PeerConnection, PeerTimeoutError, PeerUnavailableError

pytestmark = [pytest.mark.interop, pytest.mark.asyncio]

REQUEST = ApiVersionsRequest(client_software_name="t", client_software_version="1")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_nothing_listening_is_unavailable_not_a_timeout() -> None:
    peer = PeerConnection("127.0.0.1", _free_port(), "t")
    with pytest.raises(PeerUnavailableError) as raised:
        await peer.request(REQUEST, 1.0)
    assert not isinstance(raised.value, PeerTimeoutError)
    await peer.close()


async def test_a_peer_that_accepts_and_never_answers_is_a_timeout() -> None:
    held: list[asyncio.StreamWriter] = []

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    peer = PeerConnection("127.0.0.1", port, "t")
    try:
        with pytest.raises(PeerTimeoutError):
            await peer.request(REQUEST, 0.2)
    finally:
        await peer.close()
        for writer in held:
            writer.close()
        server.close()
        await server.wait_closed()
