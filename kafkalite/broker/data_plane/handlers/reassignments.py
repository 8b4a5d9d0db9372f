"""AlterPartitionReassignments and ListPartitionReassignments: moving replicas between
brokers while the partition stays available (``controller.reassignment`` has the steps).

A move is a lesson in itself: the new replica appears (``reassignment_started``), fetches
the whole log from the leader, joins the ISR (``isr_expanded``), and only then does the old
replica leave and delete its copy (``reassignment_completed``, ``replica_deleted``).
"""

from __future__ import annotations

from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.control_plane_api import Controller
from kafkalite.broker.handler_registry import api
from kafkalite.controller.reassignment import original_replicas
from kafkalite.controller.results import ApiResult
from kafkalite.metadata.image import MetadataImage
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.errors import ErrorCode


class ReassignmentApis:
    """Moves go to the controller (forwarded to it); the list is read from the metadata
    image."""

    def __init__(self, controller: Controller, image: MetadataImage) -> None:
        self._controller = controller
        self._image = image

    def _replication_factor_error(self, topic: str, index: int, target: Any) -> Any:
        """v1 clients may forbid changing the replication factor (KIP-860)."""
        registration = self._image.partition(topic, index)
        if registration is None or len(original_replicas(registration)) == len(target):
            return None
        return ApiResult(
            ErrorCode.invalid_replication_factor,
            f"The replication factor would change from {len(original_replicas(registration))} "
            f"to {len(target)}.",
        )

    @api(ApiKeys.ALTER_PARTITION_REASSIGNMENTS, 0, 1, forward=True)
    async def alter_partition_reassignments(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        allow_rf_change = bool(getattr(request, "allow_replication_factor_change", True))
        refused: dict[tuple[str, int], ApiResult] = {}
        wanted: list[tuple[str, int, tuple[int, ...] | None]] = []
        for t in request.topics:
            for p in t.partitions:
                index = int(p.partition_index)
                target = None if p.replicas is None else tuple(int(b) for b in p.replicas)
                error = (
                    None
                    if allow_rf_change or target is None
                    else self._replication_factor_error(t.name, index, target)
                )
                if error is not None:
                    refused[(t.name, index)] = error
                else:
                    wanted.append((t.name, index, target))
        results = dict(refused)
        if wanted:
            done = await self._controller.alter_partition_reassignments(wanted)
            results.update({(topic, index): result for topic, index, result in done})
        return s.AlterPartitionReassignmentsResponse(
            throttle_time=0,
            allow_replication_factor_change=allow_rf_change,
            error_code=ErrorCode.none,
            error_message=None,
            responses=tuple(
                s.ReassignableTopicResponse(
                    name=t.name,
                    partitions=tuple(
                        s.ReassignablePartitionResponse(
                            partition_index=p.partition_index,
                            error_code=(r := results[(t.name, int(p.partition_index))]).error,
                            error_message=r.message,
                        )
                        for p in t.partitions
                    ),
                )
                for t in request.topics
            ),
        )

    @api(ApiKeys.LIST_PARTITION_REASSIGNMENTS, 0, 0)
    async def list_partition_reassignments(self, ctx: RequestContext, request: Any) -> Any:
        """Every reassignment under way, or those of the partitions asked for."""
        s = ctx.schema
        image = self._image
        asked = (
            None
            if request.topics is None
            else {(t.name, int(i)) for t in request.topics for i in t.partition_indexes}
        )
        by_topic: dict[str, list[Any]] = {}
        for topic in sorted(image.topics_by_id.values(), key=lambda t: t.name):
            for index, reg in sorted(topic.partitions.items()):
                if not reg.is_reassigning or (
                    asked is not None and (topic.name, index) not in asked
                ):
                    continue
                by_topic.setdefault(topic.name, []).append(
                    s.OngoingPartitionReassignment(
                        partition_index=index,
                        replicas=reg.replicas,
                        adding_replicas=reg.adding_replicas,
                        removing_replicas=reg.removing_replicas,
                    )
                )
        return s.ListPartitionReassignmentsResponse(
            throttle_time=0,
            error_code=ErrorCode.none,
            error_message=None,
            topics=tuple(
                s.OngoingTopicReassignment(name=name, partitions=tuple(parts))
                for name, parts in by_topic.items()
            ),
        )
