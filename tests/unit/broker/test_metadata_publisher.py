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
from pathlib import Path

import pytest

from kafkalite.broker.control_plane.control_loop import ControlPlane
from kafkalite.broker.metadata_publisher import FAULT_NAME, MetadataPublisher
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

    def on_commit(offset: int, record: MetadataRecord) -> None:
        assert not control_plane.on_control_loop  # applied on the main loop
        if isinstance(record, TopicRecord):
            if record.name == "poison":
                raise OSError(28, "No space left on device")
            applied.append(record.name)

    quorum.register(lambda offset, record: publisher.publish(on_commit, offset, record))
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
