"""DescribeCluster: the live brokers and which one is the controller."""

from __future__ import annotations

from typing import Any

from kio.schema.describe_cluster.v1.request import DescribeClusterRequest

from kafkalite.broker.context import RequestContext
from kafkalite.broker.handlers.registry import handles
from kafkalite.protocol.errors import ErrorCode


@handles(DescribeClusterRequest, 0, 1)
async def describe_cluster(ctx: RequestContext, request: Any) -> Any:
    s = ctx.schema
    broker = ctx.broker
    return s.DescribeClusterResponse(
        throttle_time=0,
        error_code=ErrorCode.none,
        error_message=None,
        endpoint_type=1,
        cluster_id=broker.cluster_id,
        controller_id=broker.controller_id,
        brokers=tuple(
            s.DescribeClusterBroker(broker_id=b.broker_id, host=b.host, port=b.port, rack=b.rack)
            for b in broker.image.brokers_for_clients(broker.broker_id)
        ),
        cluster_authorized_operations=-2147483648,
    )
