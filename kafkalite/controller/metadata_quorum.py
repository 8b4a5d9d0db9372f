"""The metadata log's home: ``__cluster_metadata``, a log like any other partition's.

A committed record is one the quorum has made durable; only committed records are
replayed. With one voter, committing means an fsync of the local log. The Raft quorum (a
later issue) keeps this interface and makes committing mean "a majority of voters have it".

Layout: each append is one v2 record batch whose records hold the JSON of one metadata
record each (see ``kafkalite.metadata.records``), so a batch of records commits atomically.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from kafkalite.metadata.records import MetadataRecord, decode, encode
from kafkalite.protocol.records import Record, build_batch
from kafkalite.storage.config import LogConfig
from kafkalite.storage.log import Log

METADATA_TOPIC = "__cluster_metadata"

CommitListener = Callable[[int, MetadataRecord], None]


class SingleVoterQuorum:
    """A metadata quorum of one voter: this broker. Not thread-safe (one event loop)."""

    def __init__(self, directory: Path, now_ms: Callable[[], int], leader_epoch: int = 0) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.log = Log.open(directory / f"{METADATA_TOPIC}-0", LogConfig(), now_ms)
        self.now_ms = now_ms
        self.leader_epoch = leader_epoch
        self._listeners: list[CommitListener] = []

    @property
    def high_watermark(self) -> int:
        return self.log.log_end_offset

    def register(self, listener: CommitListener) -> None:
        self._listeners.append(listener)

    def replay_all(self) -> None:
        """Give every listener the whole committed log, in order (start-up)."""
        for offset, record in self.read_committed(self.log.log_start_offset):
            self._publish(offset, record)

    def read_committed(self, start: int) -> Iterator[tuple[int, MetadataRecord]]:
        for record in self.log.records_between(start, self.high_watermark):
            if record.value is not None:
                yield record.offset, decode(record.value)

    def append(self, records: Sequence[MetadataRecord]) -> int:
        """Append and commit atomically; returns the offset of the last record."""
        now = self.now_ms()
        batch = build_batch([Record(None, encode(r), now) for r in records])
        info = self.log.append_as_leader(batch, self.leader_epoch)
        self.log.flush()
        for offset, record in zip(
            range(info.first_offset, info.last_offset + 1), records, strict=True
        ):
            self._publish(offset, record)
        return info.last_offset

    def _publish(self, offset: int, record: MetadataRecord) -> None:
        for listener in self._listeners:
            listener(offset, record)

    def close(self) -> None:
        self.log.close()
