"""The tables of request handlers: one entry per API, with the versions it answers.

There are two listeners, as in a KRaft broker: the client listener (``HANDLERS``) and the
controller listener (``CONTROLLER_HANDLERS``: the quorum's RPCs and the requests brokers
send their controller). Keeping the tables apart means a quorum Fetch can never be taken
for a client Fetch. ApiVersions is answered from the client table, so a broker can never
advertise an API it does not handle, nor handle one it does not advertise.

A handler marked ``forward`` changes metadata: on a broker that is not the active
controller, the server sends the request as is to the controller (Kafka's forwarding).

The controller listener runs on the broker's control plane (``broker.control_plane``, a
thread of its own): its handlers may touch only the quorum and the controller. Forwarded
client handlers are run on the main loop for it, as they read the broker's image.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kio.static.protocol import RequestPayload

if TYPE_CHECKING:
    from kafkalite.broker.context import RequestContext

HandlerFn = Callable[["RequestContext", Any], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Handler:
    api_key: int
    min_version: int
    max_version: int
    fn: HandlerFn
    forward: bool = False

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version


class HandlerTable(dict[int, Handler]):
    """Handlers by API key (what a request's header carries), registered by request type."""

    def handles(
        self,
        request_type: type[RequestPayload],
        min_version: int,
        max_version: int,
        *,
        forward: bool = False,
    ) -> Callable[[HandlerFn], HandlerFn]:
        """Register ``fn`` as the handler of ``request_type``'s API (any version's class
        names it, e.g. ``ProduceRequest``) for the given version range."""

        def register(fn: HandlerFn) -> HandlerFn:
            self.add(Handler(request_type.__api_key__, min_version, max_version, fn, forward))
            return fn

        return register

    def of(self, request_type: type[RequestPayload]) -> Handler:
        """The handler of ``request_type``'s API."""
        return self[request_type.__api_key__]

    def add(self, handler: Handler) -> None:
        if handler.api_key in self:
            raise RuntimeError(f"two handlers for api_key {handler.api_key}")
        self[handler.api_key] = handler


HANDLERS = HandlerTable()
CONTROLLER_HANDLERS = HandlerTable()
handles = HANDLERS.handles
controller_handles = CONTROLLER_HANDLERS.handles
