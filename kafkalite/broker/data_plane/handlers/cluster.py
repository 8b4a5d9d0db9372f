"""DescribeCluster: the live brokers and which one is the controller.

v2 (KIP-1073) may ask for the fenced brokers too (``include_fenced_brokers``): every
registered broker is listed then, each with ``is_fenced``, which is how an operator sees a
broker that is registered but not (yet, or no longer) serving.
"""

from __future__ import annotations

from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.data_plane.cluster_identity import ClusterIdentity
from kafkalite.broker.handler_registry import api
from kafkalite.metadata.image import BrokerRegistration
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.errors import ErrorCode


class ClusterApi:
    """DescribeCluster, from this broker's metadata image."""

    def __init__(self, cluster: ClusterIdentity) -> None:
        self._cluster = cluster

    def _brokers(self, include_fenced: bool) -> list[BrokerRegistration]:
        if include_fenced:
            return sorted(self._cluster.image.brokers.values(), key=lambda b: b.broker_id)
        return self._cluster.brokers_for_clients()

    @api(ApiKeys.DESCRIBE_CLUSTER, 0, 2)
    async def describe_cluster(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        include_fenced = bool(getattr(request, "include_fenced_brokers", False))
        return s.DescribeClusterResponse(
            throttle_time=0,
            error_code=ErrorCode.none,
            error_message=None,
            endpoint_type=1,
            cluster_id=self._cluster.cluster_id,
            controller_id=self._cluster.controller_id(),
            brokers=tuple(
                s.DescribeClusterBroker(
                    broker_id=b.broker_id,
                    host=b.host,
                    port=b.port,
                    rack=b.rack,
                    is_fenced=b.fenced,
                )
                for b in self._brokers(include_fenced)
            ),
            cluster_authorized_operations=-2147483648,
        )
