"""What a handler sees of one request: the request and the client that sent it.

The broker's services are not here: each handler class names the ones it needs in its
constructor (see ``handlers.registry``).
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkalite.protocol.codec import Request, VersionedSchema, response_schema


@dataclass(slots=True)
class RequestContext:
    request: Request
    peer: str

    @property
    def version(self) -> int:
        return self.request.api_version

    @property
    def schema(self) -> VersionedSchema:
        """The response classes of this request's API version."""
        return response_schema(self.request.api_key, self.request.api_version)
