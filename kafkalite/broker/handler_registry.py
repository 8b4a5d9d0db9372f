"""Handler tables: one entry per API, with the versions it answers.

A handler is a method of a small class per API family (``ProduceApi``, ``GroupApis``),
whose constructor names what the handlers need (the replica manager, the metadata image,
the group coordinator...): a handler's dependencies are read from its class, never
fetched from the broker. The methods are marked with ``@api`` (the client listener) or
``@controller_api`` (the controller listener); ``HandlerTable.add_apis`` collects a
family's marked methods, bound to its instance, where the broker is assembled.

There are two listeners, as in a KRaft broker: the client listener and the controller
listener (the quorum's RPCs and the requests brokers send their controller). Keeping the
tables apart means a quorum Fetch can never be taken for a client Fetch. ApiVersions is
answered from the client table, so a broker can never advertise an API it does not
handle, nor handle one it does not advertise.

A handler marked ``forward`` changes metadata: on a broker that is not the active
controller, the server sends the request as is to the controller (Kafka's forwarding).

The controller listener runs on the broker's control plane (``broker.control_plane``, a
thread of its own): its handlers may touch only the quorum and the controller. Forwarded
client handlers are run on the main loop for it, as they read the broker's image.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.framing import ReceivedFrame

if TYPE_CHECKING:
    from kafkalite.broker.context import RequestContext
    from kafkalite.protocol.codec import Request

HandlerFn = Callable[["RequestContext", Any], Awaitable[Any]]
HandDecoder = Callable[[ReceivedFrame], "Request | None"]
"""Reads a frame by hand (issue 29 allows it for Produce and Fetch), or gives ``None`` for
kio to read it: the handler then takes whatever body either gives."""
F = TypeVar("F", bound=Callable[..., Awaitable[Any]])


class Listener(enum.Enum):
    CLIENT = "client"
    CONTROLLER = "controller"


@dataclass(frozen=True, slots=True)
class ApiSpec:
    """What a marked method handles: an API, its versions, on which listener."""

    listener: Listener
    api_key: int
    min_version: int
    max_version: int
    forward: bool = False
    decode: HandDecoder | None = None


@dataclass(frozen=True, slots=True)
class Handler:
    api_key: int
    min_version: int
    max_version: int
    fn: HandlerFn
    forward: bool = False
    decode: HandDecoder | None = None

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version


_MARKS: dict[Callable[..., Any], list[ApiSpec]] = {}
"""The specs of every marked method (the function objects, as defined in their class)."""


def _mark(
    listener: Listener,
    api_key: ApiKeys,
    min_version: int,
    max_version: int,
    forward: bool,
    decode: HandDecoder | None = None,
) -> Callable[[F], F]:
    def mark(fn: F) -> F:
        spec = ApiSpec(listener, api_key, min_version, max_version, forward, decode)
        _MARKS.setdefault(fn, []).append(spec)
        return fn

    return mark


def api(
    api_key: ApiKeys,
    min_version: int,
    max_version: int,
    *,
    forward: bool = False,
    decode: HandDecoder | None = None,
) -> Callable[[F], F]:
    """Mark a method as the client listener's handler of an API (``ApiKeys.PRODUCE``)
    for the given version range; ``decode``: its requests are read by hand where that
    reads them."""
    return _mark(Listener.CLIENT, api_key, min_version, max_version, forward, decode)


def controller_api(
    api_key: ApiKeys, min_version: int, max_version: int, *, decode: HandDecoder | None = None
) -> Callable[[F], F]:
    """Mark a method as the controller listener's handler of an API; ``decode``: its
    requests are read by hand where that reads them."""
    return _mark(Listener.CONTROLLER, api_key, min_version, max_version, False, decode)


def api_specs(family: type) -> Iterator[tuple[str, ApiSpec]]:
    """The marked methods of a handler class: (method name, spec), without an instance."""
    for name, member in vars(family).items():
        for spec in _MARKS.get(member, ()):
            yield name, spec


class HandlerTable(dict[int, Handler]):
    """Handlers by API key (what a request's header carries), registered by request type."""

    def handles(
        self,
        api_key: ApiKeys,
        min_version: int,
        max_version: int,
        *,
        forward: bool = False,
    ) -> Callable[[HandlerFn], HandlerFn]:
        """Register ``fn`` as the handler of an API for the given version range (a table
        built by hand, as tests do)."""

        def register(fn: HandlerFn) -> HandlerFn:
            self.add(Handler(api_key, min_version, max_version, fn, forward))
            return fn

        return register

    def add_apis(self, listener: Listener, family: object) -> None:
        """Register the methods of ``family`` (an instance of a handler class) that are
        marked for ``listener``."""
        for name, spec in api_specs(type(family)):
            if spec.listener is listener:
                fn = getattr(family, name)
                self.add(
                    Handler(
                        spec.api_key,
                        spec.min_version,
                        spec.max_version,
                        fn,
                        spec.forward,
                        spec.decode,
                    )
                )

    def of(self, api_key: ApiKeys) -> Handler:
        """The handler of an API."""
        return self[api_key]

    def add(self, handler: Handler) -> None:
        if handler.api_key in self:
            raise RuntimeError(f"two handlers for api_key {handler.api_key}")
        self[handler.api_key] = handler
