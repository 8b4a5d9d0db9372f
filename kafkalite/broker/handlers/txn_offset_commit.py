"""TxnOffsetCommit: a transactional producer commits its consumer group's offsets inside
its transaction (``send_offsets_to_transaction``). The group coordinator writes them at
once but they count only when the transaction commits (``coordinator.group.txn_offsets``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.handlers.registry import api
from kafkalite.broker.handlers.transactions import fenced_for
from kafkalite.coordinator.group.coordinator import GroupCoordinator
from kafkalite.coordinator.group.offsets_log import CommittedOffset
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.errors import ErrorCode, KafkaError


class TxnOffsetCommitApi:
    """Served by the group coordinator."""

    def __init__(self, coordinator: GroupCoordinator, now_ms: Callable[[], int]) -> None:
        self._coordinator = coordinator
        self._now_ms = now_ms

    @api(ApiKeys.TXN_OFFSET_COMMIT, 0, 4)
    async def txn_offset_commit(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        now = self._now_ms()
        offsets = {
            (t.name, int(p.partition_index)): CommittedOffset(
                int(p.committed_offset),
                int(getattr(p, "committed_leader_epoch", -1)),
                p.committed_metadata,
                now,
            )
            for t in request.topics
            for p in t.partitions
        }
        try:
            await self._coordinator.commit_transactional(
                request.group_id,
                int(request.producer_id),
                int(request.producer_epoch),
                int(getattr(request, "generation_id", -1)),
                getattr(request, "member_id", ""),
                offsets,
            )
            error = ErrorCode.none
        except KafkaError as exc:
            error = fenced_for(ctx.version, 3, _as_producer_error(exc.code))
        return s.TxnOffsetCommitResponse(
            throttle_time=0,
            topics=tuple(
                s.TxnOffsetCommitResponseTopic(
                    name=t.name,
                    partitions=tuple(
                        s.TxnOffsetCommitResponsePartition(
                            partition_index=p.partition_index, error_code=error
                        )
                        for p in t.partitions
                    ),
                )
                for t in request.topics
            ),
        )


def _as_producer_error(code: ErrorCode) -> ErrorCode:
    """The log refuses a batch from an older producer epoch as INVALID_PRODUCER_EPOCH;
    to a transactional producer that means it was fenced."""
    return ErrorCode.producer_fenced if code == ErrorCode.invalid_producer_epoch else code
