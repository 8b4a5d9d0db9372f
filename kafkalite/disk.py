"""The file-system calls whose order makes a change survive a crash or a power loss.

A file's data and its name reach the disk separately, and a power loss keeps only what
was fsynced: a rename can survive while the renamed file's data does not (an empty file
under the new name), and a rename or delete not yet fsynced in its directory can be lost.
Code that replaces files in steps (``storage.segment_swap``; also the checkpoints of
``storage`` and ``raft``) makes each step durable through a ``Disk`` before taking the
next, and never relies on a file whose data was not fsynced.
A test passes a ``Disk`` that records the calls and rebuilds every directory a power loss
could leave behind (``tests/unit/storage/power_loss.py``).
"""

from __future__ import annotations

import os
from pathlib import Path


class Disk:
    """The real file system."""

    def rename(self, source: Path, target: Path) -> None:
        """Give ``source`` the name ``target`` (replacing it), atomically."""
        os.replace(source, target)

    def unlink(self, path: Path) -> None:
        path.unlink(missing_ok=True)

    def fsync(self, path: Path) -> None:
        """Put the file's data on the disk."""
        _fsync(path)

    def fsync_dir(self, directory: Path) -> None:
        """Put the directory's entries (the renames and deletes in it) on the disk."""
        _fsync(directory)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


DISK = Disk()
