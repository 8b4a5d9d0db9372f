"""The controller as brokers call it: one operation at a time, each committed before the
next is validated.

Serialising operations is what makes validation sound: two CreateTopics for one name
cannot both pass, because the second is checked against an image that already holds the
first. Kafka's controller gets the same guarantee from its single event-queue thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TypeVar

from kafkalite.controller.metadata_quorum import SingleVoterQuorum
from kafkalite.controller.quorum_controller import (
    ApiResult,
    ControllerResult,
    CreatableTopic,
    CreatedTopic,
    QuorumController,
)

T = TypeVar("T")


class ControllerService:
    def __init__(self, quorum: SingleVoterQuorum, controller: QuorumController) -> None:
        self.quorum = quorum
        self.controller = controller
        self._lock = asyncio.Lock()

    async def _run(self, operation: Callable[[], ControllerResult[T]]) -> T:
        async with self._lock:
            result = operation()
            if result.records:
                self.quorum.append(result.records)
            return result.response

    async def register_broker(
        self, broker_id: int, host: str, port: int, rack: str | None, incarnation_id: str
    ) -> int:
        return await self._run(
            lambda: self.controller.register_broker(
                broker_id, host, port, rack, incarnation_id, self.quorum.high_watermark
            )
        )

    async def allocate_producer_ids(self, broker_id: int, broker_epoch: int) -> int:
        return await self._run(
            lambda: self.controller.allocate_producer_ids(broker_id, broker_epoch)
        )

    async def create_topics(
        self, topics: Sequence[CreatableTopic], validate_only: bool = False
    ) -> list[CreatedTopic]:
        return await self._run(lambda: self.controller.create_topics(topics, validate_only))

    async def delete_topics(self, names: Sequence[str]) -> list[tuple[str, ApiResult]]:
        return await self._run(lambda: self.controller.delete_topics(names))

    async def create_partitions(
        self, topic: str, count: int, validate_only: bool = False
    ) -> ApiResult:
        return await self._run(
            lambda: self.controller.create_partitions(topic, count, validate_only)
        )

    async def alter_configs(
        self,
        resource_type: str,
        resource_name: str,
        changes: dict[str, str | None],
        replace_all: bool,
        validate_only: bool = False,
    ) -> ApiResult:
        return await self._run(
            lambda: self.controller.alter_configs(
                resource_type, resource_name, changes, replace_all, validate_only
            )
        )
