"""WriteTxnMarkers: a transaction coordinator has this broker end a transaction on the
partitions it leads.

For each marker and partition the leader appends a control batch (commit or abort, the
producer's id and epoch, the coordinator's epoch) like any other batch - followers
replicate it like any other - and answers once it is replicated (acks=all), so that a
marker the coordinator counts as written cannot be lost in a failover. On a partition of
``__consumer_offsets`` the group coordinator then makes the transaction's offsets count
(or drops them). A marker also ends what a KIP-890 verification of the producer's
batches on the partition had found (``transaction_verification``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.data_plane.replica_manager import ProduceResult, ReplicaManager
from kafkalite.broker.data_plane.transaction_verification import VerificationGuards
from kafkalite.broker.handler_registry import api
from kafkalite.coordinator.group.coordinator import GroupCoordinator
from kafkalite.coordinator.group.offsets_log import OFFSETS_TOPIC
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.control_records import end_txn_marker_batch
from kafkalite.protocol.errors import ErrorCode
from kafkalite.storage.producer_state import AppendOrigin

MARKER_TIMEOUT_S = 10.0


class WriteTxnMarkersApi:
    """Markers are appended through the replica manager; the group coordinator learns
    how its transactional offsets ended."""

    def __init__(
        self,
        replicas: ReplicaManager,
        groups: GroupCoordinator,
        now_ms: Callable[[], int],
        verification_guards: VerificationGuards,
    ) -> None:
        self._replicas = replicas
        self._groups = groups
        self._now_ms = now_ms
        self._verification_guards = verification_guards

    @api(ApiKeys.WRITE_TXN_MARKERS, 1, 1)
    async def write_txn_markers(self, ctx: RequestContext, request: Any) -> Any:
        replicas = self._replicas
        appended: list[tuple[Any, str, int, ProduceResult]] = []
        for marker in request.markers:
            batch = end_txn_marker_batch(
                int(marker.producer_id),
                int(marker.producer_epoch),
                int(marker.coordinator_epoch),
                bool(marker.transaction_result),
                self._now_ms(),
            )
            for topic in marker.topics:
                for index in topic.partition_indexes:
                    result = replicas.append_to_leader(
                        topic.name, int(index), batch, -1, origin=AppendOrigin.COORDINATOR
                    )
                    appended.append((marker, topic.name, int(index), result))
                    if result.error == ErrorCode.none:
                        self._verification_guards.marker_written(
                            (topic.name, int(index)), int(marker.producer_id)
                        )
        await replicas.wait_for_acks([(t, p, r) for _, t, p, r in appended], MARKER_TIMEOUT_S)
        for marker, topic, index, result in appended:
            if topic == OFFSETS_TOPIC and result.error == ErrorCode.none:
                self._groups.complete_transaction(
                    index, int(marker.producer_id), bool(marker.transaction_result)
                )
        s = ctx.schema
        return s.WriteTxnMarkersResponse(
            markers=tuple(
                s.WritableTxnMarkerResult(
                    producer_id=marker.producer_id,
                    topics=tuple(
                        s.WritableTxnMarkerTopicResult(
                            name=topic.name,
                            partitions=tuple(
                                s.WritableTxnMarkerPartitionResult(
                                    partition_index=index,
                                    error_code=_result(appended, marker, topic.name, int(index)),
                                )
                                for index in topic.partition_indexes
                            ),
                        )
                        for topic in marker.topics
                    ),
                )
                for marker in request.markers
            )
        )


def _result(
    appended: list[tuple[Any, str, int, ProduceResult]],
    marker: Any,
    topic: str,
    index: int,
) -> ErrorCode:
    return next(r.error for m, t, p, r in appended if m is marker and t == topic and p == index)
