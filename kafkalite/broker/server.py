"""The asyncio TCP server: frames in, handler calls, frames out.

Each connection is a ``FrameStream`` (a bare ``asyncio.Protocol`` that splits reads into
frames) served by a task of its own.

Responses on a connection go back in request order, which is what Kafka guarantees and
what idempotent producers rely on. Requests are served one at a time, except that
consecutive Produce requests overlap (up to five read ahead): each appends in arrival
order, then waits for its acks while the next appends, so the batches a producer keeps in
flight replicate together.

Anything wrong with a frame (garbage, a version we do not speak, a frame bigger than
``socket.request.max.bytes``) closes that connection only. Kafka does the same, except
that ApiVersions gets a real answer: an UNSUPPORTED_VERSION reply in v0 format that lists
what we do speak, so new clients can downgrade.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import struct
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from kafkalite.broker.api_versions import unsupported_version_reply
from kafkalite.broker.context import Connection, RequestContext
from kafkalite.broker.control_plane_api import Controller, ServeLocallyError
from kafkalite.broker.handler_registry import Handler, HandlerTable
from kafkalite.network.frame_stream import FrameStream, PeerEndedError
from kafkalite.network.send_frame import Frame, frame_bytes, send_frame
from kafkalite.protocol.codec import (
    API_VERSIONS_KEY,
    EncodedResponse,
    MalformedRequestError,
    Request,
    UnsupportedApiError,
    api_name,
    decode_request,
    encode_response,
    response_class,
)
from kafkalite.protocol.error_response import error_response
from kafkalite.protocol.errors import ErrorCode
from kafkalite.protocol.framing import FrameSizeError, ReceivedFrame

T = TypeVar("T")
RunOnMain = Callable[[Coroutine[Any, Any, Any]], Awaitable[Any]]
log = logging.getLogger(__name__)
_SIZE = struct.Struct(">i")
_API_KEY_AND_VERSION = struct.Struct(">hh")
PRODUCE_KEY = 0
MAX_IN_FLIGHT = 5  # requests read ahead on one connection (librdkafka sends up to 5)


class ConnectionClosed(Exception):
    """Ends a connection's loop; the reason is logged once, in ``_close``."""


class KafkaServer:
    """Accepts connections on one of the broker's listeners.

    The client listener answers in request order, as Kafka clients require. The controller
    listener (``concurrent``) serves each request as its own task and answers as soon as it
    can: only Kafka-Lite's own peers connect there, and they match responses by
    correlation id, so a quorum Fetch parked at the leader holds nothing else up.

    ``forward_to`` (client listener): where requests marked ``forward`` go when this
    broker is not the active controller. ``run_on_main`` (controller listener): how such
    a request, forwarded here, is run on the main loop, where its handler's state lives.
    """

    def __init__(
        self,
        max_request_bytes: int,
        handlers: HandlerTable,
        *,
        concurrent: bool = False,
        forward_to: Controller | None = None,
        run_on_main: RunOnMain | None = None,
    ) -> None:
        self.forward_to = forward_to
        self.run_on_main = run_on_main
        self.max_request_bytes = max_request_bytes
        self.handlers = handlers
        self.concurrent = concurrent
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._streams: set[FrameStream] = set()
        self._requests: set[asyncio.Task[None]] = set()
        self._hand_decoders = {
            key: handler.decode for key, handler in handlers.items() if handler.decode is not None
        }

    async def start(self, host: str, port: int) -> None:
        self._server = await asyncio.get_running_loop().create_server(
            self._accept, host, port, reuse_address=True
        )

    def _accept(self) -> FrameStream:
        return FrameStream(self.max_request_bytes, self._connected)

    def _connected(self, stream: FrameStream) -> None:
        self._streams.add(stream)
        self._connections.add(asyncio.create_task(self._serve(stream)))

    async def stop(self, grace_s: float = 0.5) -> None:
        """Stop accepting and close every connection; a connection whose request is still
        running after ``grace_s`` (a Produce waiting for acks, a JoinGroup) is cancelled."""
        if self._server is not None:
            self._server.close()
        for stream in list(self._streams):
            stream.close()
        if self._connections:
            await asyncio.wait(list(self._connections), timeout=grace_s)
        remaining = [*self._connections, *self._requests]
        for task in remaining:
            task.cancel()
        if remaining:
            await asyncio.wait(remaining, timeout=grace_s)

    async def _serve(self, stream: FrameStream) -> None:
        task = asyncio.current_task()
        assert task is not None
        connection = Connection(stream.peer_name())
        peer = connection.peer
        by_peer = False
        try:
            await self._loop(stream, connection)
        except (ConnectionClosed, FrameSizeError) as exc:
            log.info("closing connection from %s: %s", peer, exc)
        except ConnectionError:
            by_peer = not connection.closing_here  # the client hung up, or its process is gone
        except asyncio.CancelledError:
            pass  # the listener stops: this connection's task ends quietly, as it began
        except Exception:
            log.exception("closing connection from %s after an internal error", peer)
        finally:
            self._connections.discard(task)
            self._streams.discard(stream)
            connection.closed(by_peer)
            await self._close(stream)

    async def _loop(self, stream: FrameStream, connection: Connection) -> None:
        if self.concurrent:
            while True:
                frame = await stream.read_frame()
                task = asyncio.create_task(self._respond(frame, connection, stream))
                self._requests.add(task)
                task.add_done_callback(self._requests.discard)
        # Client listener: responses strictly in request order. A Produce runs as a task
        # of its own: consecutive Produce requests overlap - each appends at once, in
        # order, then waits for its acks while the next one appends - so an idempotent
        # producer's five in-flight batches replicate together instead of one round trip
        # each. Every other request waits until everything before it is answered, then is
        # served right here, in the connection's own task, as if served one at a time: no
        # task, no queue and no extra wake-up for it.
        produced = _OverlappingProduces(stream, connection)
        try:
            while True:
                frame = await stream.read_frame()
                try:
                    decoded = self._decode(frame, connection.peer)
                except ConnectionClosed:
                    await produced.all_sent()  # the answers before it still go out
                    raise
                if not isinstance(decoded, bytes) and produced.overlaps(decoded[0]):
                    await produced.add(asyncio.create_task(self._run(*decoded, frame, connection)))
                    continue
                if produced.unsent:
                    await produced.all_sent()
                response = (
                    decoded
                    if isinstance(decoded, bytes)
                    else await self._run(*decoded, frame, connection)
                )
                if response is not None:
                    await send_frame(stream, response)
        except PeerEndedError:
            await produced.all_sent()  # it sends no more, and is answered what it asked
            raise
        except ConnectionError:
            produced.raise_failure()  # why this side closed it, if it did
            raise
        finally:
            produced.close()

    async def _respond(
        self, frame: ReceivedFrame, connection: Connection, stream: FrameStream
    ) -> None:
        peer = connection.peer
        try:
            response = await self._handle(frame, connection)
        except ConnectionClosed as exc:
            log.info("closing connection from %s: %s", peer, exc)
            connection.close_here(stream)
            return
        except Exception:
            log.exception("closing connection from %s after an internal error", peer)
            connection.close_here(stream)
            return
        if response is not None and not stream.is_closing():
            stream.write(frame_bytes(response))

    async def _handle(self, frame: ReceivedFrame, connection: Connection) -> Frame | None:
        decoded = self._decode(frame, connection.peer)
        if isinstance(decoded, bytes):
            return decoded
        return await self._run(*decoded, frame, connection)

    async def _run(
        self, request: Request, handler: Handler, frame: ReceivedFrame, connection: Connection
    ) -> Frame | None:
        """Serve one decoded request: its handler here, or the controller's."""
        peer = connection.peer
        controller = self.forward_to
        if handler.forward and controller is not None and not controller.active_here:
            try:
                forwarded = await controller.forward(frame)
                return _SIZE.pack(len(forwarded)) + forwarded
            except ServeLocallyError:
                pass  # elected meanwhile: the handler below runs it here
            except Exception as exc:
                raise ConnectionClosed(f"cannot reach the controller: {exc}") from exc
        context = RequestContext(request, peer, connection)
        work = handler.fn(context, request.body)
        if handler.forward and self.run_on_main is not None:
            # a client's admin request forwarded to this controller: its handler reads
            # the broker's image, which lives on the main loop
            work = self.run_on_main(_awaited(work))
        try:
            body = await work
        except ConnectionClosed:
            raise
        except Exception as exc:
            asked = decode_request(frame) if handler.decode is not None else request
            body = self._failed(request, asked.body, peer, exc)
        if body is None:
            return None
        if isinstance(body, EncodedResponse):
            parts = body.parts
            return parts[0] if len(parts) == 1 and type(parts[0]) is bytes else parts
        return encode_response(request.api_key, request.api_version, request.correlation_id, body)

    def _decode(self, frame: ReceivedFrame, peer: str) -> tuple[Request, Handler] | bytes:
        """The request and its handler, or the whole answer when there is none to run
        (ApiVersions in a version we do not speak); anything else unreadable closes. A
        version this broker does not speak is logged at INFO with the API and version,
        so that a client's silent disconnect has a visible cause."""
        try:
            request = self._read_by_hand(frame) or decode_request(frame)
        except UnsupportedApiError as exc:
            return self._unsupported(exc.api_key, exc.api_version, exc.correlation_id, peer)
        except MalformedRequestError as exc:
            raise ConnectionClosed(str(exc)) from exc
        handler = self.handlers.get(request.api_key)
        if handler is None or not handler.supports(request.api_version):
            return self._unsupported(
                request.api_key, request.api_version, request.correlation_id, peer
            )
        return request, handler

    def _read_by_hand(self, frame: ReceivedFrame) -> Request | None:
        """The request, if its handler reads it by hand and that reads it (a quorum Fetch,
        a Produce read into a buffer of its own)."""
        if not self._hand_decoders or len(frame) < _API_KEY_AND_VERSION.size:
            return None
        decode = self._hand_decoders.get(_API_KEY_AND_VERSION.unpack_from(frame)[0])
        return None if decode is None else decode(frame)

    def _unsupported(
        self, api_key: int, api_version: int, correlation_id: int | None, peer: str
    ) -> bytes:
        """What Kafka gives a version it does not speak: ApiVersions gets UNSUPPORTED_VERSION
        with the versions it does speak (so the client can downgrade); any other request
        closes the connection."""
        handler = self.handlers.get(api_key)
        spoken = (
            f"this broker speaks v{handler.min_version}-{handler.max_version}"
            if handler is not None
            else "this broker does not serve that API"
        )
        what = f"{api_name(api_key)} v{api_version} is not supported: {spoken}"
        if api_key == API_VERSIONS_KEY and correlation_id is not None:
            log.info("%s from %s; answered UNSUPPORTED_VERSION with its versions", what, peer)
            return unsupported_version_reply(self.handlers, correlation_id)
        raise ConnectionClosed(what)

    @staticmethod
    def _failed(request: Request, asked: Any, peer: str, exc: Exception) -> Any:
        """A handler raised: answer UNKNOWN_SERVER_ERROR for this request, as Kafka does,
        and log it once with the request. An acks=0 Produce expects no answer: its
        connection is closed instead, which is how Kafka tells such a producer.
        ``asked``: the request's body as kio reads it (the answer's shape follows it)."""
        name = type(request.body).__name__
        log.error(
            "%s v%d (correlation id %d) from %s, client %r, failed; answering "
            "UNKNOWN_SERVER_ERROR. The request: %s",
            name,
            request.api_version,
            request.correlation_id,
            peer,
            request.client_id,
            _abridged(request.body),
            exc_info=exc,
        )
        if request.api_key == PRODUCE_KEY and getattr(request.body, "acks", 1) == 0:
            raise ConnectionClosed(f"{name} with acks=0 failed: {exc!r}") from exc
        response_cls = response_class(request.api_key, request.api_version)
        message = f"{type(exc).__name__}: {exc}"
        return error_response(response_cls, asked, ErrorCode.unknown_server_error, message)

    @staticmethod
    async def _close(stream: FrameStream) -> None:
        stream.close()
        with contextlib.suppress(Exception):
            await stream.wait_closed()


class _OverlappingProduces:
    """The Produce requests of one connection that overlap (see ``KafkaServer._loop``):
    each a task, whose response is written, in request order, by the callback of the task
    that completes the run at the head (no sender task, no queue: a response written as
    soon as those before it are). If a request ends the connection (its task raises),
    the connection is closed at once, rather than at the client's next request, which may
    never come; the reading loop then raises why (``raise_failure``).

    Back-pressure: no more than ``MAX_IN_FLIGHT`` run at once, and none is added while
    the peer does not read what was written (``FrameStream.drain``)."""

    def __init__(self, stream: FrameStream, connection: Connection) -> None:
        self._stream = stream
        self._connection = connection
        self._in_order: deque[asyncio.Task[Frame | None]] = deque()
        self._failure: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None
        """Set when the head is written: for ``add`` at the limit, and ``all_sent``."""

    @property
    def unsent(self) -> int:
        """Responses not yet written."""
        return len(self._in_order)

    @staticmethod
    def overlaps(request: Request) -> bool:
        """Every Produce: any may wait (for acks=all, for the transaction coordinator's
        verification) while the next one appends."""
        return request.api_key == PRODUCE_KEY

    async def add(self, task: asyncio.Task[Frame | None]) -> None:
        """Answer ``task``'s request after the others; waits while ``MAX_IN_FLIGHT`` are
        unanswered or the peer does not read."""
        self._in_order.append(task)
        task.add_done_callback(self._write_done)
        while len(self._in_order) >= MAX_IN_FLIGHT and self._failure is None:
            await self._written()
        self.raise_failure()
        await self._stream.drain()

    async def all_sent(self) -> None:
        """Wait until every queued response is written; raises why the connection ended
        here, if it did."""
        while self._in_order and self._failure is None:
            await self._written()
        self.raise_failure()

    def raise_failure(self) -> None:
        if self._failure is not None:
            raise self._failure

    async def _written(self) -> None:
        waiter = self._waiter = asyncio.get_running_loop().create_future()
        try:
            await waiter
        finally:
            self._waiter = None

    def _write_done(self, _: asyncio.Task[Frame | None]) -> None:
        """Write the responses at the head that are complete, in order."""
        in_order = self._in_order
        while in_order and in_order[0].done() and self._failure is None:
            task = in_order.popleft()
            if task.cancelled():
                continue  # the connection is ending
            failure = task.exception()
            if failure is not None:
                self._failure = failure
                self._connection.close_here(self._stream)
                break
            response = task.result()
            if response is not None and not self._stream.is_closing():
                self._stream.write(frame_bytes(response))  # a Produce's answer is bytes
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def close(self) -> None:
        """Whatever is left ends with the connection; its errors (the client hung up
        mid-response) are not news, and must not surface as "never retrieved"."""
        for leftover in self._in_order:
            leftover.remove_done_callback(self._write_done)
            leftover.cancel()
            leftover.add_done_callback(_settled)
        self._in_order.clear()


def _settled(task: asyncio.Future[Any]) -> None:
    """Mark a left-over task's outcome as seen (it ended with its connection)."""
    if not task.cancelled():
        task.exception()


def _abridged(body: Any, limit: int = 2000) -> str:
    """The request as text, cut short (a Produce carries up to megabytes of records)."""
    text = repr(body)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


async def _awaited(work: Awaitable[T]) -> T:
    return await work
