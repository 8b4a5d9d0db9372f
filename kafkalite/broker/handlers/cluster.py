"""DescribeCluster: the live brokers and which one is the controller."""

from __future__ import annotations

from typing import Any

from kio.schema.describe_cluster.v1.request import DescribeClusterRequest

from kafkalite.broker.cluster_identity import ClusterIdentity
from kafkalite.broker.context import RequestContext
from kafkalite.broker.handlers.registry import api
from kafkalite.protocol.errors import ErrorCode


class ClusterApi:
    """DescribeCluster, from this broker's metadata image."""

    def __init__(self, cluster: ClusterIdentity) -> None:
        self._cluster = cluster

    @api(DescribeClusterRequest, 0, 1)
    async def describe_cluster(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        return s.DescribeClusterResponse(
            throttle_time=0,
            error_code=ErrorCode.none,
            error_message=None,
            endpoint_type=1,
            cluster_id=self._cluster.cluster_id,
            controller_id=self._cluster.controller_id(),
            brokers=tuple(
                s.DescribeClusterBroker(
                    broker_id=b.broker_id, host=b.host, port=b.port, rack=b.rack
                )
                for b in self._cluster.brokers_for_clients()
            ),
            cluster_authorized_operations=-2147483648,
        )
