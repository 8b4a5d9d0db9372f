"""The active controller decides one operation at a time against an image that holds every
earlier operation's records - also when the caller of an earlier one gave up (cancelled)
while its records were on their way through the quorum. Otherwise two CreateTopics of one
name both succeed (seen: two ``__consumer_offsets`` with two topic ids, whose partitions'
leaders then disagree)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kafkalite.broker.controller_service import ControllerService
from kafkalite.controller.quorum_controller import QuorumController
from kafkalite.controller.topic_control import CreatableTopic
from kafkalite.metadata.image import MetadataImage
from kafkalite.metadata.records import MetadataRecord
from kafkalite.protocol.errors import ErrorCode
from kafkalite.raft.config import RaftConfig

pytestmark = [pytest.mark.unit, pytest.mark.asyncio]


class SlowQuorum:
    """Commits (replays into the image) only when the test says so."""

    is_active = True
    leader_id = 1
    config = RaftConfig()

    def __init__(self, image: MetadataImage) -> None:
        self.image = image
        self.release = asyncio.Event()
        self.offset = 0

    def on_activation(self, listener: Any) -> None:
        pass

    def on_request_from(self, listener: Any) -> None:
        pass

    async def append(self, records: list[MetadataRecord]) -> int:
        await self.release.wait()
        for record in records:
            self.image.replay(record, self.offset)
            self.offset += 1
        return self.offset


async def test_a_cancelled_caller_does_not_let_the_next_operation_in_early() -> None:
    image = MetadataImage()
    controller = QuorumController(image)
    quorum = SlowQuorum(image)
    for broker in (1, 2, 3):
        for record in controller.register_broker(broker, "h", 9000 + broker, None, "x", 0).records:
            image.replay(record, 0)
    service = ControllerService(
        quorum, controller, lambda: 0, lambda coro, name: None, lambda t, **f: None
    )  # type: ignore[arg-type]
    topic = CreatableTopic("__consumer_offsets", 1, 3, configs={})
    first = asyncio.create_task(service.create_topics([topic]))
    await asyncio.sleep(0.01)  # decided; its records wait for the quorum
    first.cancel()  # the client that asked went away
    second = asyncio.create_task(service.create_topics([topic]))
    await asyncio.sleep(0.01)
    assert not second.done()  # not decided before the first's records are applied
    quorum.release.set()
    (result,) = await second
    assert result.result.error == ErrorCode.topic_already_exists
    assert len([t for t in image.topics_by_id.values() if t.name == "__consumer_offsets"]) == 1
    with pytest.raises(asyncio.CancelledError):
        await first
