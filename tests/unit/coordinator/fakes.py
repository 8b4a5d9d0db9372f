"""A stand-in for the broker's ``__consumer_offsets``: one partition the test controls."""

from __future__ import annotations

from kafkalite.protocol.records import Record


class FakeOffsetsTopic:
    """One offsets partition whose log and leadership the test controls."""

    def __init__(self) -> None:
        self.records: list[Record] = []
        self.epoch: int | None = 0

    def partition_count(self) -> int:
        return 1

    def leader_epoch(self, partition: int) -> int | None:
        return self.epoch

    async def append(self, partition: int, records: list[Record]) -> None:
        self.records.extend(records)

    def read_all(self, partition: int) -> list[Record]:
        return list(self.records)
