"""The aborted-transaction index of one segment (``.txnindex``), as in Kafka.

A read_committed consumer must skip the records of aborted transactions, but the broker
never decodes records to filter them. Instead each Fetch answer lists the aborted
transactions that overlap the returned data, ``(producer_id, first_offset)``, and the
client drops that producer's records from ``first_offset`` up to its abort marker. This
index is where the broker finds them without scanning the log: one entry per aborted
transaction, kept in the segment that holds its abort marker.

``<base offset>.txnindex`` is a sequence of 34-byte entries, big-endian (Kafka's
``AbortedTxn``)::

    version             int16   0
    producer_id         int64
    first_offset        int64   the transaction's first record on this partition
    last_offset         int64   the offset of its abort marker
    last_stable_offset  int64   the partition's LSO once the marker was written

It is derived data: recovery rebuilds it for any segment it re-validates, and truncation
drops the entries whose marker was cut off. Not thread-safe: owned by its segment's log.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kafkalite.disk import DISK

_ENTRY = struct.Struct(">hqqqq")
ENTRY_SIZE = _ENTRY.size
VERSION = 0


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


class TransactionIndex:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: list[AbortedTxn] = []
        self._load()

    def _load(self) -> None:
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return
        usable = len(data) - len(data) % ENTRY_SIZE  # a torn last entry is recovery's job
        for pos in range(0, usable, ENTRY_SIZE):
            version, pid, first, last, lso = _ENTRY.unpack_from(data, pos)
            if version != VERSION:
                break
            self.entries.append(AbortedTxn(pid, first, last, lso))

    def append(self, txn: AbortedTxn) -> None:
        self.entries.append(txn)
        with self.path.open("ab") as out:
            out.write(_entry(txn))

    def truncate_to(self, offset: int) -> None:
        """Forget aborted transactions whose marker is at ``offset`` or later."""
        kept = [t for t in self.entries if t.last_offset < offset]
        if len(kept) != len(self.entries):
            self._rewrite(kept)

    def reset(self) -> None:
        """Empty the index (recovery refills it from the batches it re-validates)."""
        self._rewrite([])

    def _rewrite(self, entries: Iterable[AbortedTxn]) -> None:
        self.entries = list(entries)
        if not self.entries:
            self.path.unlink(missing_ok=True)
            return
        tmp = self.path.with_suffix(".txnindex.tmp")
        tmp.write_bytes(encode_entries(self.entries))
        os.replace(tmp, self.path)

    def overlapping(self, start_offset: int, end_offset: int) -> list[AbortedTxn]:
        """Aborted transactions with records in ``[start_offset, end_offset)``."""
        return [
            t for t in self.entries if t.last_offset >= start_offset and t.first_offset < end_offset
        ]

    def flush(self) -> None:
        if self.path.exists():
            DISK.fsync(self.path)

    def delete(self) -> None:
        self.entries = []
        self.path.unlink(missing_ok=True)


def encode_entries(entries: Iterable[AbortedTxn]) -> bytes:
    """A ``.txnindex`` file's bytes."""
    return b"".join(_entry(t) for t in entries)


def _entry(txn: AbortedTxn) -> bytes:
    return _ENTRY.pack(
        VERSION, txn.producer_id, txn.first_offset, txn.last_offset, txn.last_stable_offset
    )
