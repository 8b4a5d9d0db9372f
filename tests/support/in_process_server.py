"""The broker's real ``KafkaServer`` in the test's own process, on a real socket, with a
handler table the test writes: for what no real handler can be made to do from outside
(fail on purpose, hold a request)."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator

from kafkalite.broker.handler_registry import HandlerTable
from kafkalite.broker.server import KafkaServer


@contextlib.asynccontextmanager
async def serving(
    table: HandlerTable, max_request_bytes: int = 1 << 20
) -> AsyncIterator[tuple[KafkaServer, int]]:
    """The server listening on a free port of 127.0.0.1, and that port; stopped after."""
    server = KafkaServer(max_request_bytes, table)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    await server.start("127.0.0.1", port)
    try:
        yield server, port
    finally:
        await server.stop()
