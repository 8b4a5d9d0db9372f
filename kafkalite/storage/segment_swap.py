"""Replacing segments by a cleaned one, safely across a crash and a power loss (Kafka's
``replaceSegments``).

The log cleaner writes a group of segments' surviving batches into ``<base>.log.cleaned``
(``base``: the group's first base offset). ``seal`` writes the aborted transactions they
keep beside it, ``<base>.txnindex.cleaned``, and fsyncs both; ``swap_in`` then puts the
copy in place of the group, which ends before offset ``end``::

    1. rename  <base>.txnindex.cleaned  ->  <base>.txnindex.swap
    2. rename  <base>.log.cleaned       ->  <base>.<end>.log.swap      fsync the directory
    3. delete  the group's segments (.log, .index, .txnindex)
    4. rename  <base>.txnindex.swap     ->  <base>.txnindex            fsync the directory
    5. rename  <base>.<end>.log.swap    ->  <base>.log                 fsync the directory

Step 2 decides: once its rename is on disk, the swap is finished by whoever comes next.
A file's data and its name reach the disk separately, and a power loss keeps a rename that
was not fsynced, or loses it, independently of the data (``disk``): so the copy is fsynced
before it is renamed (else the name could survive with nothing in it: the group deleted,
an empty segment in its place), and each step is on disk before a later one relies on it.
The swap's name says where the group ended, because an empty copy (every record in the
group superseded) cannot say it itself.

Opening (``finish_interrupted_swaps``): without a ``.log.swap`` nothing was decided, and
the ``.cleaned`` and ``.txnindex.swap`` files go (the old segments are all there). With
one, the group's segments go, the swap's aborted-transaction index takes the place of the
old one (unless step 4 was done already), and the swap becomes ``<base>.log``.
"""

from __future__ import annotations

import logging
from pathlib import Path

from kafkalite.disk import DISK, Disk
from kafkalite.storage.segment import segment_name
from kafkalite.storage.txn_index import AbortedTxn, encode_entries

log = logging.getLogger(__name__)
CLEANED = ".log.cleaned"
TXN_CLEANED = ".txnindex.cleaned"
TXN_SWAP = ".txnindex.swap"
SWAP = ".log.swap"
_SEGMENT_FILES = (".log", ".index", ".txnindex")


def cleaned_path(directory: Path, base_offset: int) -> Path:
    return directory / f"{segment_name(base_offset)}{CLEANED}"


def _path(directory: Path, base_offset: int, suffix: str) -> Path:
    return directory / f"{segment_name(base_offset)}{suffix}"


def _swap_path(directory: Path, base_offset: int, end_offset: int) -> Path:
    return directory / f"{segment_name(base_offset)}.{segment_name(end_offset)}{SWAP}"


def seal(directory: Path, base_offset: int, aborted: list[AbortedTxn], disk: Disk = DISK) -> None:
    """Complete a cleaned copy: its aborted transactions beside it, both files on disk."""
    index = _path(directory, base_offset, TXN_CLEANED)
    index.write_bytes(encode_entries(aborted))
    disk.fsync(cleaned_path(directory, base_offset))
    disk.fsync(index)


def discard(directory: Path, base_offset: int, disk: Disk = DISK) -> None:
    """Drop a cleaned copy that will not be swapped in."""
    disk.unlink(cleaned_path(directory, base_offset))
    disk.unlink(_path(directory, base_offset, TXN_CLEANED))


def swap_in(
    directory: Path, base_offset: int, replaced: list[int], end_offset: int, disk: Disk = DISK
) -> None:
    """Steps 1 to 5 for a sealed copy of the segments ``replaced`` (their base offsets),
    which end before ``end_offset``. The caller has closed them."""
    swap = _swap_path(directory, base_offset, end_offset)
    disk.rename(_path(directory, base_offset, TXN_CLEANED), _path(directory, base_offset, TXN_SWAP))
    disk.rename(cleaned_path(directory, base_offset), swap)
    disk.fsync_dir(directory)
    for base in replaced:
        _delete_segment_files(directory, base, disk)
    disk.rename(_path(directory, base_offset, TXN_SWAP), _path(directory, base_offset, ".txnindex"))
    disk.fsync_dir(directory)
    disk.rename(swap, _path(directory, base_offset, ".log"))
    disk.fsync_dir(directory)


def finish_interrupted_swaps(directory: Path, disk: Disk = DISK) -> None:
    """Before a log opens: drop copies whose swap was not decided, finish decided ones."""
    swaps = {
        int(path.name.split(".")[0]): (path, int(path.name.split(".")[1]))
        for path in directory.glob(f"*{SWAP}")
    }
    for suffix in (CLEANED, TXN_CLEANED, TXN_SWAP):
        for stray in directory.glob(f"*{suffix}"):
            if int(stray.name.split(".")[0]) not in swaps or suffix == CLEANED:
                disk.unlink(stray)
    for base, (swap, end) in sorted(swaps.items()):
        index = next(
            (p for s in (TXN_SWAP, TXN_CLEANED) if (p := _path(directory, base, s)).exists()),
            None,
        )
        for path in directory.glob("*.log"):
            if path.stem.isdigit() and base <= int(path.stem) < end:
                done = index is None and int(path.stem) == base  # step 4 was
                _delete_segment_files(directory, int(path.stem), disk, keep_index=done)
        if index is not None:
            disk.rename(index, _path(directory, base, ".txnindex"))
        disk.fsync_dir(directory)
        disk.rename(swap, _path(directory, base, ".log"))
        log.warning("%s: finished an interrupted swap of cleaned segment %d", directory, base)
    if swaps:
        disk.fsync_dir(directory)


def _delete_segment_files(directory: Path, base: int, disk: Disk, keep_index: bool = False) -> None:
    """``keep_index``: the ``.txnindex`` is the swap's already (step 4 was done)."""
    for suffix in _SEGMENT_FILES:
        if not (keep_index and suffix == ".txnindex"):
            disk.unlink(_path(directory, base, suffix))
