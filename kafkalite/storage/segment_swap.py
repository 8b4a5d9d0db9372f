"""Replacing segments by a cleaned one, safely across a crash (Kafka's ``replaceSegments``).

The log cleaner writes a group of segments' surviving batches into ``<base>.log.cleaned``
(``base``: the group's first base offset), then swaps it in::

    1. rename  <base>.log.cleaned  ->  <base>.log.swap     (the copy is complete)
    2. delete  the group's segments (<base>.log among them, with their indexes)
    3. rename  <base>.log.swap     ->  <base>.log

A crash before 1 leaves a ``.cleaned`` file, which opening deletes (the old segments are
all there). A crash after 1 leaves a ``.swap`` file, which opening finishes: the segments
the swap covers go, and it becomes ``<base>.log``.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from kafkalite.protocol.record_batch import iter_batches
from kafkalite.storage.segment import segment_name

log = logging.getLogger(__name__)
CLEANED = ".log.cleaned"
SWAP = ".log.swap"
_SEGMENT_FILES = (".log", ".index", ".txnindex")


def cleaned_path(directory: Path, base_offset: int) -> Path:
    return directory / f"{segment_name(base_offset)}{CLEANED}"


def swap_in(directory: Path, base_offset: int, replaced: list[int]) -> None:
    """Steps 1 to 3 for a complete ``.cleaned`` file; ``replaced`` are the group's bases.
    The caller has closed the replaced segments."""
    swap = directory / f"{segment_name(base_offset)}{SWAP}"
    os.replace(cleaned_path(directory, base_offset), swap)
    for base in replaced:
        _delete_segment_files(directory, base)
    os.replace(swap, directory / f"{segment_name(base_offset)}.log")


def finish_interrupted_swaps(directory: Path) -> None:
    """Before a log opens: drop half-written cleanings, complete begun swaps."""
    for cleaned in directory.glob(f"*{CLEANED}"):
        cleaned.unlink()
    for swap in directory.glob(f"*{SWAP}"):
        base = int(swap.name[: -len(SWAP)])
        end = _next_offset(swap, base)
        for path in directory.glob("*.log"):
            if path.stem.isdigit() and base <= int(path.stem) < end:
                _delete_segment_files(directory, int(path.stem))
        os.replace(swap, directory / f"{segment_name(base)}.log")
        log.warning("%s: finished an interrupted swap of cleaned segment %d", directory, base)


def _delete_segment_files(directory: Path, base: int) -> None:
    for suffix in _SEGMENT_FILES:
        (directory / f"{segment_name(base)}{suffix}").unlink(missing_ok=True)


def _next_offset(path: Path, base: int) -> int:
    """The offset after the last batch of a complete segment file (rare: read whole)."""
    return max((h.next_offset for _, h in iter_batches(path.read_bytes())), default=base)
