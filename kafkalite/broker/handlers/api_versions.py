"""ApiVersions: what this broker speaks, read off the handler table."""

from __future__ import annotations

from typing import Any

from kio.schema.api_versions.v4.request import ApiVersionsRequest

from kafkalite.broker.context import RequestContext
from kafkalite.broker.handlers.registry import HANDLERS, handles
from kafkalite.protocol.codec import API_VERSIONS_KEY, encode_response, response_schema
from kafkalite.protocol.errors import ErrorCode


def _api_keys(schema: Any) -> tuple[Any, ...]:
    return tuple(
        schema.ApiVersion(api_key=h.api_key, min_version=h.min_version, max_version=h.max_version)
        for h in sorted(HANDLERS.values(), key=lambda h: h.api_key)
    )


@handles(ApiVersionsRequest, 0, 4)
async def api_versions(ctx: RequestContext, request: Any) -> Any:
    schema = ctx.schema
    return schema.ApiVersionsResponse(
        error_code=ErrorCode.none, api_keys=_api_keys(schema), throttle_time=0
    )


def unsupported_version_reply(correlation_id: int) -> bytes:
    """Kafka's answer to an ApiVersions version it does not know: v0 body, error 35."""
    schema = response_schema(API_VERSIONS_KEY, 0)
    body = schema.ApiVersionsResponse(
        error_code=ErrorCode.unsupported_version, api_keys=_api_keys(schema)
    )
    return encode_response(API_VERSIONS_KEY, 0, correlation_id, body)
