"""One replica's log as a strip of offset cells, and what colour each cell is (pure).

A cell's colour is what a student must learn to read off a replicated log:

- ``committed``: below the partition's high watermark. Every in-sync replica has it; a
  consumer may read it; no clean election can lose it.
- ``uncommitted``: from the high watermark to this replica's log end offset. Appended,
  maybe acknowledged with ``acks=1``, but a failover can still truncate it.
- ``truncated``: a truncation removed it (``log_truncated`` events carry the removed range);
  kept visible, struck through, for a while after, so the loss can be seen.
- ``open_txn``: from an open transaction's first offset on: a ``read_committed`` consumer
  waits at the last stable offset until the transaction ends.
- ``aborted``: written by a transaction that aborted; ``read_committed`` consumers skip it.

A cell whose offset was truncated and then written again (by the new leader's records) is
``replaced``: the offset is the same, the record is not.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum


class CellKind(StrEnum):
    COMMITTED = "committed"
    UNCOMMITTED = "uncommitted"
    TRUNCATED = "truncated"
    OPEN_TXN = "open_txn"
    ABORTED = "aborted"


@dataclass(frozen=True)
class Cell:
    offset: int
    kind: CellKind
    replaced: bool = False


@dataclass(frozen=True)
class OffsetRange:
    """Offsets ``first`` to ``last`` inclusive."""

    first: int
    last: int

    def __contains__(self, offset: object) -> bool:
        return isinstance(offset, int) and self.first <= offset <= self.last


@dataclass(frozen=True)
class ReplicaLog:
    """What the strip of one replica is drawn from."""

    log_start_offset: int
    log_end_offset: int
    committed_end: int
    """Offsets below it are committed: the partition's high watermark (the leader's), or
    the replica's own when no leader is known."""


def replica_cells(
    log: ReplicaLog,
    window: range,
    truncated: Sequence[OffsetRange] = (),
    aborted: Sequence[OffsetRange] = (),
    open_txn_starts: Iterable[int] = (),
) -> tuple[Cell, ...]:
    """The cells of ``window`` this replica has (or had, if truncated), in offset order.
    Offsets before its log start, or past its end and never truncated, have no cell."""
    open_from = min(open_txn_starts, default=None)
    cells = []
    for offset in window:
        was_truncated = any(offset in r for r in truncated)
        if offset < log.log_start_offset:
            continue
        if offset >= log.log_end_offset:
            if was_truncated:
                cells.append(Cell(offset, CellKind.TRUNCATED))
            continue
        if any(offset in r for r in aborted):
            kind = CellKind.ABORTED
        elif open_from is not None and offset >= open_from:
            kind = CellKind.OPEN_TXN
        elif offset < log.committed_end:
            kind = CellKind.COMMITTED
        else:
            kind = CellKind.UNCOMMITTED
        cells.append(Cell(offset, kind, replaced=was_truncated))
    return tuple(cells)


def offset_window(log_start_offset: int, ends: Iterable[int], width: int) -> range:
    """The offsets drawn for a partition: the last ``width`` up to the furthest end any
    replica (or a truncated ghost) reaches, never before the log start. Every replica of
    the partition shares it, so equal offsets line up in a column."""
    end = max([log_start_offset, *ends])
    return range(max(log_start_offset, end - width), end)
