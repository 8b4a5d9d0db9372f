"""A metadata record the broker cannot apply stops the Raft driver loudly, unapplied.

Before, the driver counted a record as applied before its listeners ran, and a listener's
exception ended the driver task in silence: the broker kept serving with metadata frozen
at that record while ``applied_end_offset`` claimed it was past it.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest

from kafkalite.metadata.records import MetadataRecord, TopicRecord
from kafkalite.supervision import TaskSupervisor
from tests.unit.broker.single_voter import single_voter_quorum

pytestmark = [pytest.mark.unit, pytest.mark.asyncio]


async def test_a_listener_failure_stops_the_driver_before_the_record_counts(
    tmp_path: Path,
) -> None:
    deaths: list[tuple[str, BaseException]] = []
    supervisor = TaskSupervisor(lambda task, exc: deaths.append((task, exc)))
    quorum = single_voter_quorum(tmp_path)
    applied: list[str] = []

    def listener(offset: int, records: list[MetadataRecord]) -> None:
        for record in records:
            if isinstance(record, TopicRecord):
                if record.name == "poison":
                    raise RuntimeError("cannot apply this record")
                applied.append(record.name)

    quorum.register(listener)
    quorum.start(supervisor.spawn)
    async with asyncio.timeout(5):
        while not quorum.is_active:
            await asyncio.sleep(0.01)
        await quorum.committed(quorum.append([TopicRecord("fine", "id-1")]))
    before = quorum.applied_end_offset
    appending = asyncio.create_task(
        quorum.committed(quorum.append([TopicRecord("poison", "id-2")]))
    )
    async with asyncio.timeout(5):
        while not deaths:
            await asyncio.sleep(0.01)
    [(task, exc)] = deaths
    assert task == "raft" and isinstance(exc, RuntimeError)
    assert applied == ["fine"]
    assert quorum.applied_end_offset == before  # the poison record is not applied
    assert not appending.done()  # nobody is told it was committed and applied
    appending.cancel()
    with contextlib.suppress(asyncio.CancelledError, RuntimeError):
        await quorum.stop()
