"""The election state a voter must never forget: epoch, vote and known leader.

Raft's safety rests on two promises: a voter votes at most once per epoch, and a leader's
epoch is never reused. Both hold across crashes only if the state is on disk *before* the
vote response leaves or the node acts as leader, so ``QuorumStateStore.write`` returns only
once the state is durable. Kafka keeps the same facts in ``quorum-state``
(``ElectionState``: ``leaderEpoch``, ``votedId``, ``leaderId``).

File format (``FileQuorumStateStore``), one JSON object, like Kafka's ``quorum-state``::

    {"leader_epoch": 7, "voted_id": 2, "leader_id": 2, "data_version": 0}

(-1 for "none"), replaced atomically: temp file, fsync, ``os.replace``, fsync directory.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from kafkalite.raft.snapshot import write_atomically

NO_ID = -1


@dataclass(frozen=True, slots=True)
class ElectionState:
    """``voted_id``/``leader_id`` are -1 when unknown (Kafka's ``OptionalInt.empty``)."""

    leader_epoch: int = 0
    voted_id: int = NO_ID
    leader_id: int = NO_ID

    def has_voted(self) -> bool:
        return self.voted_id != NO_ID

    def has_leader(self) -> bool:
        return self.leader_id != NO_ID


class QuorumStateStore(Protocol):
    """Durable home of the ``ElectionState``; ``write`` is durable when it returns."""

    def read(self) -> ElectionState: ...

    def write(self, state: ElectionState) -> None: ...


class MemoryQuorumStateStore:
    """A store for simulations. ``write`` is synced; a store built with ``fsync=False``
    (a test-only fault: a disk that lies) keeps writes only until ``crash()``."""

    def __init__(self, state: ElectionState | None = None, *, fsync: bool = True) -> None:
        self._synced = state or ElectionState()
        self._current = self._synced
        self._fsync = fsync
        self.writes = 0

    def read(self) -> ElectionState:
        return self._current

    def write(self, state: ElectionState) -> None:
        self._current = state
        self.writes += 1
        if self._fsync:
            self._synced = state

    @property
    def synced(self) -> ElectionState:
        return self._synced

    def crash(self) -> MemoryQuorumStateStore:
        """What a restarted process finds: only synced writes."""
        return MemoryQuorumStateStore(self._synced, fsync=self._fsync)


class FileQuorumStateStore:
    """``quorum-state`` as a JSON file, replaced atomically and fsynced on every write."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)

    def read(self) -> ElectionState:
        try:
            raw = json.loads(self.path.read_text())
        except FileNotFoundError:
            return ElectionState()
        return ElectionState(
            leader_epoch=int(raw["leader_epoch"]),
            voted_id=int(raw["voted_id"]),
            leader_id=int(raw["leader_id"]),
        )

    def write(self, state: ElectionState) -> None:
        body = {
            "leader_epoch": state.leader_epoch,
            "voted_id": state.voted_id,
            "leader_id": state.leader_id,
            "data_version": 0,
        }
        write_atomically(self.path, json.dumps(body).encode())
