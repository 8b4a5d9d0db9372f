"""ApiVersions: what this broker speaks, read off the client listener's handler table."""

from __future__ import annotations

from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.handlers.registry import HandlerTable, api, controller_api
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.codec import API_VERSIONS_KEY, encode_response, response_schema
from kafkalite.protocol.errors import ErrorCode


def _api_keys(schema: Any, table: HandlerTable) -> tuple[Any, ...]:
    return tuple(
        schema.ApiVersion(api_key=h.api_key, min_version=h.min_version, max_version=h.max_version)
        for h in sorted(table.values(), key=lambda h: h.api_key)
    )


class ApiVersionsApi:
    """Answers from ``table`` (the client listener's, on both listeners), which is
    complete by the time a request arrives."""

    def __init__(self, table: HandlerTable) -> None:
        self._table = table

    @api(ApiKeys.API_VERSIONS, 0, 4)
    @controller_api(ApiKeys.API_VERSIONS, 0, 4)
    async def api_versions(self, ctx: RequestContext, request: Any) -> Any:
        schema = ctx.schema
        return schema.ApiVersionsResponse(
            error_code=ErrorCode.none, api_keys=_api_keys(schema, self._table), throttle_time=0
        )


def unsupported_version_reply(table: HandlerTable, correlation_id: int) -> bytes:
    """Kafka's answer to an ApiVersions version it does not know: v0 body, error 35,
    listing what ``table`` speaks."""
    schema = response_schema(API_VERSIONS_KEY, 0)
    body = schema.ApiVersionsResponse(
        error_code=ErrorCode.unsupported_version, api_keys=_api_keys(schema, table)
    )
    return encode_response(API_VERSIONS_KEY, 0, correlation_id, body)
