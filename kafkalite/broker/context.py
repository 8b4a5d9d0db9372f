"""What a handler sees of one request: the broker's services, the request, the client."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafkalite.protocol.codec import Request, VersionedSchema, response_schema

if TYPE_CHECKING:
    from kafkalite.broker.broker import Broker


@dataclass(slots=True)
class RequestContext:
    broker: Broker
    request: Request
    peer: str

    @property
    def version(self) -> int:
        return self.request.api_version

    @property
    def schema(self) -> VersionedSchema:
        """The response classes of this request's API version."""
        return response_schema(self.request.api_key, self.request.api_version)
