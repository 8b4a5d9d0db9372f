"""A committed record the main loop cannot apply halts the broker, and is never reported
applied.

The production hand-off: a one-voter quorum commits on a real control-plane thread, its
listeners publish through ``MetadataPublisher`` to this test's loop (the main loop), and
the "replayed up to here" marks travel the same way, as ``Broker`` wires them. Before, a
bare ``call_soon_threadsafe`` callback ran the record: asyncio logged the exception, the
next callbacks ran, and the mark after the record (what heartbeats report) moved past it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from kafkalite.broker.control_plane.control_loop import ControlPlane
from kafkalite.broker.metadata_publisher import FAULT_NAME, MetadataPublisher
from kafkalite.metadata.image import MetadataImage
from kafkalite.metadata.records import MetadataRecord, TopicRecord
from kafkalite.supervision import TaskSupervisor
from tests.unit.broker.single_voter import single_voter_quorum

pytestmark = [pytest.mark.unit, pytest.mark.asyncio, pytest.mark.timeout(30)]


async def test_a_failed_apply_halts_and_nothing_after_it_counts_as_applied(
    tmp_path: Path,
) -> None:
    faults: list[tuple[str, BaseException]] = []
    supervisor = TaskSupervisor(lambda name, exc: faults.append((name, exc)))
    control_plane = ControlPlane("test-control", supervisor.spawn)
    control_plane.start()
    publisher = MetadataPublisher(control_plane.to_main, supervisor.on_death)
    quorum = single_voter_quorum(tmp_path)
    applied: list[str] = []
    reported: list[int] = [0]  # what the heartbeat would report: the last mark applied here

    def on_commit(offset: int, records: list[MetadataRecord]) -> None:
        assert not control_plane.on_control_loop  # applied on the main loop
        for record in records:
            if isinstance(record, TopicRecord):
                if record.name == "poison":
                    raise OSError(28, "No space left on device")
                applied.append(record.name)

    quorum.register(lambda offset, records: publisher.publish(on_commit, offset, records))
    quorum.on_applied(lambda end: publisher.publish(reported.append, end))

    handed_over = asyncio.Event()

    async def commit_three() -> tuple[int, int]:
        quorum.start(supervisor.spawn)
        while not quorum.is_active:
            await asyncio.sleep(0.01)
        await quorum.committed(quorum.append([TopicRecord("fine", "id-1")]))
        poison = quorum.append([TopicRecord("poison", "id-2")])
        await quorum.committed(poison)
        after = quorum.append([TopicRecord("after", "id-3")])  # applied and marked
        await quorum.committed(after)
        control_plane.to_main(handed_over.set)  # runs after every hand-off before it
        return poison, after

    try:
        async with asyncio.timeout(10):
            poison, after = await control_plane.run(commit_three())
            await handed_over.wait()
    finally:
        with contextlib.suppress(asyncio.CancelledError, RuntimeError):
            await control_plane.run(quorum.stop())
        await control_plane.stop()
    [(name, exc)] = faults
    assert name == FAULT_NAME and isinstance(exc, OSError)
    assert applied == ["fine"]  # nothing after the record that failed
    assert max(reported) <= poison < after  # the failed record never reported applied


async def test_an_entry_reaches_the_main_loop_whole(tmp_path: Path) -> None:
    """What a client request sees between two hand-offs is never half an entry.

    The controller writes a decision as one entry (broker 1 fenced, and each partition it
    led given a new leader). Each record used to cross to the main loop as a callback of
    its own, so a Metadata request served between them saw broker 1 fenced and no new
    leader yet, and its cached answer (kept until the image's offset moves, which it does
    not within an entry) said "no leader" until the next entry: 42 s in lab 08's failed
    run. Here the hand-offs are queued and run one at a time, as a busy loop would
    interleave them with requests."""
    supervisor = TaskSupervisor(lambda name, exc: None)
    handed_over: list[tuple[Callable[..., None], tuple[Any, ...]]] = []
    publisher = MetadataPublisher(
        lambda callback, *args: handed_over.append((callback, args)), supervisor.on_death
    )
    quorum = single_voter_quorum(tmp_path)
    image = MetadataImage()

    def replay(offset: int, records: list[MetadataRecord]) -> None:
        for record in records:
            image.replay(record, offset)

    quorum.register(lambda offset, records: publisher.publish(replay, offset, records))
    quorum.start(supervisor.spawn)
    try:
        async with asyncio.timeout(10):
            while not quorum.is_active:
                await asyncio.sleep(0.01)
            await quorum.committed(
                quorum.append([TopicRecord("fenced", "id-1"), TopicRecord("elected", "id-2")])
            )
    finally:
        with contextlib.suppress(asyncio.CancelledError, RuntimeError):
            await quorum.stop()
    seen = []
    for callback, args in handed_over:
        callback(*args)
        seen.append(sorted(image.topic_ids))  # what a request served now would see
    assert ["fenced"] not in seen
    assert seen[-1] == ["elected", "fenced"]
