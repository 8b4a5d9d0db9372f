"""The active controller pipelines its operations (``ControllerService``, as Kafka's
``QuorumController``): each is decided against an image holding every earlier operation's
records, committed or not, and answered once its own are committed. A fence decided
during a flood of AlterPartition is appended and applied at once, not after their
commits; a controller that loses its leadership reverts to what was committed."""

from __future__ import annotations

import asyncio

import pytest

from kafkalite.broker.context import Connection
from kafkalite.broker.control_plane_api import NotControllerError
from kafkalite.controller.topic_control import CreatableTopic
from kafkalite.events import EventType
from kafkalite.metadata.records import FenceBrokerRecord, MetadataRecord, PartitionChangeRecord
from kafkalite.protocol.errors import ErrorCode
from tests.unit.broker.controller_fakes import FakeQuorum, service_with_brokers

pytestmark = [pytest.mark.unit, pytest.mark.asyncio]

FLOOD = 200


def topic(name: str, partitions: int = 1) -> list[CreatableTopic]:
    return [CreatableTopic(name, partitions, 3, configs={})]


def entry_of(quorum: FakeQuorum, wanted: type[MetadataRecord]) -> int:
    return next(i for i, e in enumerate(quorum.entries) if any(isinstance(r, wanted) for r in e))


async def test_a_fence_during_a_flood_of_alter_partition_is_not_queued_behind_their_commits() -> (
    None
):
    """Broker 3's process dies while the leaders of 200 partitions ask for ISR changes.
    Each round trip of the quorum commits everything appended before it: the fence is
    appended behind the flood at once and commits in the same round as the flood, not
    200 rounds later."""
    now = [0]
    service, quorum = service_with_brokers(now)
    created = asyncio.create_task(service.create_topics(topic("busy", FLOOD), timeout_s=0.01))
    await asyncio.sleep(0)
    quorum.commit()
    await created
    shrinks = []
    for index in range(FLOOD):
        p = service.image.partition("busy", index)
        assert p is not None
        dropped = next(b for b in reversed(p.isr) if b != p.leader)
        isr = tuple(b for b in p.isr if b != dropped)
        shrinks.append(
            asyncio.create_task(
                service.alter_partition(
                    p.leader,
                    service.image.brokers[p.leader].broker_epoch,
                    "busy",
                    index,
                    p.leader_epoch,
                    p.partition_epoch,
                    isr,
                )
            )
        )
    await asyncio.sleep(0)
    assert len(quorum.entries) >= FLOOD + 4, "every AlterPartition was decided and appended"
    connection = Connection("broker 3")
    service.watch_connection(connection, 3)
    connection.closed(by_peer=True)  # broker 3 was killed: the OS closed its socket
    assert service.image.brokers[3].fenced, "the fence waited for the flood's commits"
    fence = entry_of(quorum, FenceBrokerRecord)
    assert fence == len(quorum.entries) - 1
    quorum.commit()  # one round trip of the quorum
    await asyncio.sleep(0)
    assert quorum.committed_end > fence
    assert all(s.done() for s in shrinks)
    replies = [s.result().error for s in shrinks]
    assert set(replies) == {ErrorCode.none}


async def test_an_operation_is_decided_against_records_not_yet_committed() -> None:
    """Two CreateTopics of one name: the second is decided while the first's records wait
    for the quorum, and still sees the topic (two topic ids for one name, otherwise). Its
    caller giving up changes nothing: the first's records are applied already."""
    now = [0]
    service, quorum = service_with_brokers(now)
    first = asyncio.create_task(service.create_topics(topic("__consumer_offsets")))
    await asyncio.sleep(0)
    first.cancel()  # the client that asked went away
    second = asyncio.create_task(service.create_topics(topic("__consumer_offsets")))
    await asyncio.sleep(0)
    assert not second.done(), "answered before what it rests on is committed"
    quorum.commit()
    (result,) = await second
    assert result.result.error == ErrorCode.topic_already_exists
    named = [t for t in service.images.committed.topics_by_id.values()]
    assert [t.name for t in named] == ["__consumer_offsets"]
    with pytest.raises(asyncio.CancelledError):
        await first


async def test_an_operation_that_writes_nothing_is_answered_once_what_it_saw_is_committed() -> None:
    """A heartbeat's answer (fenced or not) may rest on records not yet committed: it waits
    for them, as Kafka's controller answers no read of uncommitted state."""
    now = [0]
    service, quorum = service_with_brokers(now)
    service._fence(2, None, EventType.BROKER_SESSION_EXPIRED)
    epoch = service.image.brokers[3].broker_epoch
    beat = asyncio.create_task(service.heartbeat(3, epoch, 10, False, False))
    await asyncio.sleep(0)
    assert not beat.done()
    quorum.commit()
    reply = await beat
    assert not reply.is_fenced


async def test_a_controller_that_loses_its_leadership_reverts_to_what_was_committed() -> None:
    """Its uncommitted records may never be committed (the new leader's log wins): its
    waiting operations fail with NOT_CONTROLLER, and its image is the committed one again,
    which the records the new leader does commit then extend."""
    now = [0]
    service, quorum = service_with_brokers(now)
    committed_end = len(quorum.entries)
    kept = asyncio.create_task(service.create_topics(topic("kept")))
    lost = asyncio.create_task(service.create_topics(topic("lost")))
    await asyncio.sleep(0)
    assert {"kept", "lost"} <= set(service.image.topic_ids)
    quorum.lose_leadership(keep=committed_end + 1)  # the new leader has "kept" only
    for operation in (kept, lost):
        with pytest.raises(NotControllerError):
            await operation
    assert service.image.topic_ids == {}, "uncommitted records outlived the leadership"
    quorum.commit()  # the new leader commits what it kept
    assert set(service.image.topic_ids) == {"kept"}
    assert service.image.to_records() == service.images.committed.to_records()


async def test_a_fence_for_a_closed_connection_spares_a_broker_that_registered_again() -> None:
    """A killed broker restarted at once: its new process registered before the controller
    saw the old connection close. The broker is live at its new epoch."""
    now = [0]
    service, quorum = service_with_brokers(now)
    old = Connection("broker 2, first process")
    service.watch_connection(old, 2)
    registered = asyncio.create_task(service.register_broker(2, "h", 9002, None, "y"))
    await asyncio.sleep(0)
    quorum.commit()
    await registered
    old.closed(by_peer=True)
    assert not service.image.brokers[2].fenced
    assert not [r for r in quorum.appended if isinstance(r, FenceBrokerRecord)]


async def test_a_connection_this_side_closed_fences_no_one() -> None:
    now = [0]
    service, _quorum = service_with_brokers(now)
    connection = Connection("broker 2")
    service.watch_connection(connection, 2)
    connection.closed(by_peer=False)  # a bad frame, or this listener stopping
    assert not service.image.brokers[2].fenced


async def test_a_killed_leaders_partitions_move_at_once() -> None:
    """What the fence of a closed connection does: new leaders from the ISR, applied now."""
    now = [0]
    service, quorum = service_with_brokers(now)
    created = asyncio.create_task(service.create_topics(topic("orders", 3), timeout_s=0.01))
    await asyncio.sleep(0)
    quorum.commit()
    await created
    led_by_2 = [i for i in range(3) if service.image.partition("orders", i).leader == 2]  # type: ignore[union-attr]
    connection = Connection("broker 2")
    service.watch_connection(connection, 2)
    connection.closed(by_peer=True)
    changes = [r for r in quorum.entries[-1] if isinstance(r, PartitionChangeRecord)]
    assert len(changes) == 3
    assert led_by_2
    assert all(service.image.partition("orders", i).leader != 2 for i in led_by_2)  # type: ignore[union-attr]
