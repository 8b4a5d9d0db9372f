"""Producer-state snapshots: a restart replays the active segment, not the whole log.

The producer state (``producer_state``) is derived from the log, but deriving it means
reading every batch header of the partition. As Kafka does, the log writes the state to a
snapshot file when a segment rolls and when it closes cleanly; on opening, it loads the
latest snapshot at or below where its log is known good and replays only the batches
after it. Truncation deletes the snapshots above the new end and reloads the same way.

``<offset>.snapshot`` holds the state of every batch below ``offset``, as JSON (Kafka's
is binary with a CRC; JSON shows students what the broker remembers), renamed into place::

    {"version": 1, "offset": 1200,
     "producers": [{"producer_id": 7, "producer_epoch": 0, "coordinator_epoch": -1,
                    "last_timestamp": 1700000000000, "current_txn_first_offset": null,
                    "batches": [[first_seq, last_seq, first_offset, last_offset, timestamp],
                                ...]}],
     "unreplicated": [[producer_id, first_offset, marker_offset, is_aborted], ...]}

A snapshot that cannot be read is skipped (an older one, or a full replay, takes over).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from kafkalite.storage.checkpoint import write_atomically
from kafkalite.storage.producer_state import (
    BatchMetadata,
    CompletedTxn,
    ProducerEntry,
    ProducerStateManager,
)

log = logging.getLogger(__name__)
SUFFIX = ".snapshot"
VERSION = 1
SNAPSHOTS_KEPT = 2


class ProducerSnapshots:
    """The snapshot files of one partition directory. Their offsets are kept in memory
    (listed once when the log opens): a roll writes one without listing the directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.offsets = sorted(int(p.stem) for p in directory.glob(f"*{SUFFIX}") if p.stem.isdigit())

    def write(self, offset: int, state: ProducerStateManager) -> None:
        """Snapshot ``state`` (every batch below ``offset``); keep the newest few only."""
        body = {
            "version": VERSION,
            "offset": offset,
            "producers": [_entry_json(pid, e) for pid, e in sorted(state.producers.items())],
            "unreplicated": [
                [t.producer_id, t.first_offset, t.last_offset, t.is_aborted]
                for t in state.unreplicated
            ],
        }
        text = json.dumps(body, separators=(",", ":"))
        write_atomically(self._path(offset), text, durable=False)  # lost: replay more
        self.offsets = sorted({*self.offsets, offset})
        while len(self.offsets) > SNAPSHOTS_KEPT:
            self._path(self.offsets.pop(0)).unlink(missing_ok=True)

    def load_latest(self, at_most: int, state: ProducerStateManager) -> int | None:
        """Fill ``state`` from the newest readable snapshot at or below ``at_most``;
        returns its offset, or None (``state`` left empty) when there is none."""
        for offset in reversed(self.offsets):
            if offset > at_most:
                continue
            state.clear()
            try:
                body = json.loads(self._path(offset).read_text())
                if body["version"] != VERSION or body["offset"] != offset:
                    raise ValueError(f"version {body['version']}, offset {body['offset']}")
                _fill(state, body)
                return offset
            except (OSError, ValueError, KeyError, TypeError) as exc:
                log.warning(
                    "%s: skipping unreadable producer snapshot %d: %s", self.directory, offset, exc
                )
        state.clear()
        return None

    def delete_above(self, offset: int) -> None:
        """Forget snapshots of a future that truncation removed (offsets above ``offset``)."""
        for found in [o for o in self.offsets if o > offset]:
            self._path(found).unlink(missing_ok=True)
            self.offsets.remove(found)

    def _path(self, offset: int) -> Path:
        return self.directory / f"{offset:020d}{SUFFIX}"


def _entry_json(producer_id: int, entry: ProducerEntry) -> dict[str, Any]:
    return {
        "producer_id": producer_id,
        "producer_epoch": entry.producer_epoch,
        "coordinator_epoch": entry.coordinator_epoch,
        "last_timestamp": entry.last_timestamp,
        "current_txn_first_offset": entry.current_txn_first_offset,
        "batches": [
            [b.first_seq, b.last_seq, b.first_offset, b.last_offset, b.timestamp]
            for b in entry.batches
        ],
    }


def _fill(state: ProducerStateManager, body: dict[str, Any]) -> None:
    for p in body["producers"]:
        entry = ProducerEntry(
            int(p["producer_epoch"]),
            current_txn_first_offset=p["current_txn_first_offset"],
            last_timestamp=int(p["last_timestamp"]),
            coordinator_epoch=int(p["coordinator_epoch"]),
        )
        entry.batches.extend(BatchMetadata(*map(int, b)) for b in p["batches"])
        state.restore(int(p["producer_id"]), entry)
    state.unreplicated.extend(
        CompletedTxn(int(pid), int(first), int(last), bool(aborted))
        for pid, first, last, aborted in body["unreplicated"]
    )
