"""ApiVersions: what this broker speaks, read off the client listener's handler table, and
(v3+) the features of the cluster that change how clients use it, as a Kafka 4.0 cluster
created fresh has them finalized: ``transaction.version`` 2 (KIP-890 part 2: the producer
epoch bumped at each transaction's end; a client that sees it may send Produce v12, EndTxn
v5, TxnOffsetCommit v5) and ``group.version`` 1 (KIP-848 consumer groups)."""

from __future__ import annotations

from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.handler_registry import HandlerTable, api, controller_api
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.codec import API_VERSIONS_KEY, encode_response, response_schema
from kafkalite.protocol.errors import ErrorCode


def _api_keys(schema: Any, table: HandlerTable) -> tuple[Any, ...]:
    return tuple(
        schema.ApiVersion(api_key=h.api_key, min_version=h.min_version, max_version=h.max_version)
        for h in sorted(table.values(), key=lambda h: h.api_key)
    )


FEATURES: dict[str, tuple[int, int, int]] = {
    "group.version": (0, 1, 1),
    "transaction.version": (0, 2, 2),
}
"""Feature -> (lowest and highest level supported, the level finalized). Kafka-Lite's are
fixed, so their epoch is 0 (Kafka's is the metadata offset of their last change)."""
FEATURES_VERSION = 3


def _features(schema: Any) -> dict[str, Any]:
    return {
        "supported_features": tuple(
            schema.SupportedFeatureKey(name=n, min_version=lo, max_version=hi)
            for n, (lo, hi, _) in sorted(FEATURES.items())
        ),
        "finalized_features_epoch": 0,
        "finalized_features": tuple(
            schema.FinalizedFeatureKey(name=n, max_version_level=f, min_version_level=f)
            for n, (_, _, f) in sorted(FEATURES.items())
        ),
    }


class ApiVersionsApi:
    """Answers from ``table`` (the client listener's, on both listeners), which is
    complete by the time a request arrives."""

    def __init__(self, table: HandlerTable) -> None:
        self._table = table

    @api(ApiKeys.API_VERSIONS, 0, 4)
    @controller_api(ApiKeys.API_VERSIONS, 0, 4)
    async def api_versions(self, ctx: RequestContext, request: Any) -> Any:
        schema = ctx.schema
        features = _features(schema) if ctx.version >= FEATURES_VERSION else {}
        return schema.ApiVersionsResponse(
            error_code=ErrorCode.none,
            api_keys=_api_keys(schema, self._table),
            throttle_time=0,
            **features,
        )


def unsupported_version_reply(table: HandlerTable, correlation_id: int) -> bytes:
    """Kafka's answer to an ApiVersions version it does not know: v0 body, error 35,
    listing what ``table`` speaks."""
    schema = response_schema(API_VERSIONS_KEY, 0)
    body = schema.ApiVersionsResponse(
        error_code=ErrorCode.unsupported_version, api_keys=_api_keys(schema, table)
    )
    return encode_response(API_VERSIONS_KEY, 0, correlation_id, body)
