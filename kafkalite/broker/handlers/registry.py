"""The table of request handlers: one entry per API, with the versions it answers.

ApiVersions is answered from this table, so a broker can never advertise an API it does
not handle, nor handle one it does not advertise.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kafkalite.broker.context import RequestContext

HandlerFn = Callable[["RequestContext", Any], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Handler:
    api_key: int
    min_version: int
    max_version: int
    fn: HandlerFn

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version


HANDLERS: dict[int, Handler] = {}


def handles(api_key: int, min_version: int, max_version: int) -> Callable[[HandlerFn], HandlerFn]:
    """Register ``fn`` as the handler of ``api_key`` for the given version range."""

    def register(fn: HandlerFn) -> HandlerFn:
        if api_key in HANDLERS:
            raise RuntimeError(f"two handlers for api_key {api_key}")
        HANDLERS[api_key] = Handler(api_key, min_version, max_version, fn)
        return fn

    return register
