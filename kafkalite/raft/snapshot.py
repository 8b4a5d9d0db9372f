"""Snapshots of the state machine: everything the log held below ``snapshot_id.end_offset``.

A snapshot lets the log drop its prefix, and lets a follower that fell behind the leader's
log start catch up by FetchSnapshot instead of Fetch. The quorum treats the content as
opaque bytes; the controller decides what is in it.

On disk (``FileSnapshotStore``) one snapshot is one file named like Kafka's
``<end_offset:020d>-<epoch:010d>.checkpoint``::

    magic  b"KLSN" | u32 crc32c(payload) | payload

written to a temporary file, fsynced, renamed, and the directory fsynced, so a crash leaves
either the whole snapshot or none.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import crc32c

from kafkalite.disk import DISK


@dataclass(frozen=True, slots=True, order=True)
class OffsetAndEpoch:
    """Kafka's ``OffsetAndEpoch``; as a ``snapshot_id``: ``end_offset`` is exclusive and
    ``epoch`` is the epoch of the entry at ``end_offset - 1``. Ordered by offset then epoch."""

    end_offset: int
    epoch: int


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The state machine as of ``snapshot_id`` (all entries below ``end_offset`` applied)."""

    snapshot_id: OffsetAndEpoch
    data: bytes


class SnapshotStore(Protocol):
    """Where a log keeps its snapshots; ``save`` is durable when it returns."""

    def save(self, snapshot: Snapshot) -> None: ...

    def latest(self) -> Snapshot | None: ...

    def read(self, snapshot_id: OffsetAndEpoch) -> Snapshot | None: ...


class MemorySnapshotStore:
    """Snapshots in a dict; every save counts as synced (it survives a simulated crash)."""

    def __init__(self) -> None:
        self._snapshots: dict[OffsetAndEpoch, Snapshot] = {}

    def save(self, snapshot: Snapshot) -> None:
        self._snapshots[snapshot.snapshot_id] = snapshot

    def latest(self) -> Snapshot | None:
        return self._snapshots[max(self._snapshots)] if self._snapshots else None

    def read(self, snapshot_id: OffsetAndEpoch) -> Snapshot | None:
        return self._snapshots.get(snapshot_id)


_MAGIC = b"KLSN"
_HEADER = struct.Struct(">4sI")
_SUFFIX = ".checkpoint"


def write_atomically(path: Path, data: bytes) -> None:
    """Write temp + fsync + rename + fsync dir: after a crash ``path`` is old or new, whole."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    DISK.fsync_dir(path.parent)


class FileSnapshotStore:
    """One checkpoint file per snapshot in ``directory``; corrupt files are ignored."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)

    @staticmethod
    def _name(snapshot_id: OffsetAndEpoch) -> str:
        return f"{snapshot_id.end_offset:020d}-{snapshot_id.epoch:010d}{_SUFFIX}"

    def save(self, snapshot: Snapshot) -> None:
        body = _HEADER.pack(_MAGIC, crc32c.crc32c(snapshot.data)) + snapshot.data
        write_atomically(self.directory / self._name(snapshot.snapshot_id), body)

    def read(self, snapshot_id: OffsetAndEpoch) -> Snapshot | None:
        path = self.directory / self._name(snapshot_id)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        if len(raw) < _HEADER.size:
            return None
        magic, crc = _HEADER.unpack_from(raw)
        data = raw[_HEADER.size :]
        if magic != _MAGIC or crc32c.crc32c(data) != crc:
            return None
        return Snapshot(snapshot_id, data)

    def latest(self) -> Snapshot | None:
        ids = []
        for path in self.directory.glob("*" + _SUFFIX):
            offset, _, epoch = path.name.removesuffix(_SUFFIX).partition("-")
            ids.append(OffsetAndEpoch(int(offset), int(epoch)))
        for snapshot_id in sorted(ids, reverse=True):
            snapshot = self.read(snapshot_id)
            if snapshot is not None:
                return snapshot
        return None
