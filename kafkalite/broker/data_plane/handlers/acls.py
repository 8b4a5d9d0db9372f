"""DescribeAcls, CreateAcls, DeleteAcls: answered as a Kafka broker without an authorizer.

Kafka-Lite runs without authentication or authorization (a lab cluster on loopback), so,
like a Kafka broker with no ``authorizer.class.name``, it answers every ACL request with
SECURITY_DISABLED: a client gets a clear "security features are disabled" error instead
of a dropped connection.
"""

from __future__ import annotations

from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.handler_registry import api
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.errors import ErrorCode

DISABLED = "No Authorizer is configured on the broker"


class AclApis:
    """Needs nothing: every answer is SECURITY_DISABLED."""

    @api(ApiKeys.DESCRIBE_ACLS, 1, 3)
    async def describe_acls(self, ctx: RequestContext, request: Any) -> Any:
        return ctx.schema.DescribeAclsResponse(
            throttle_time=0,
            error_code=ErrorCode.security_disabled,
            error_message=DISABLED,
            resources=(),
        )

    @api(ApiKeys.CREATE_ACLS, 1, 3)
    async def create_acls(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        return s.CreateAclsResponse(
            throttle_time=0,
            results=tuple(
                s.AclCreationResult(error_code=ErrorCode.security_disabled, error_message=DISABLED)
                for _ in request.creations
            ),
        )

    @api(ApiKeys.DELETE_ACLS, 1, 3)
    async def delete_acls(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        return s.DeleteAclsResponse(
            throttle_time=0,
            filter_results=tuple(
                s.DeleteAclsFilterResult(
                    error_code=ErrorCode.security_disabled, error_message=DISABLED, matching_acls=()
                )
                for _ in request.filters
            ),
        )
