"""A ``Disk`` that records what reached the disk, and rebuilds what a power loss could leave.

The model is the pessimistic one that crash-consistency studies of file systems use (ALICE,
CrashMonkey): a file's data survives only as of its last fsync (a file never fsynced
survives empty), and directory operations (renames, deletes) survive in the order they
were made, any prefix of those since the directory's last fsync. So after a rename that was
not preceded by an fsync of the file, a power loss can leave the new name with nothing in
it, the way ext4 without ``auto_da_alloc`` or XFS can. File systems that also reorder
directory operations are not modelled (the swap fsyncs its directory between the steps
that depend on each other, which covers them too, untested).

Only the directory under test is modelled: its files when ``PowerLossDisk`` is made are on
disk already (the test flushed them), and the files written later count only through the
calls made on this ``Disk``. Each call is also a crash point: ``crash_at`` stops the work
(``PowerLost``) before the call of that index, as pulling the plug there would.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

from kafkalite.disk import Disk


class PowerLost(Exception):
    """The plug was pulled before this call."""


class PowerLossDisk(Disk):
    def __init__(self, directory: Path, crash_at: int | None = None) -> None:
        self.directory = directory
        self.crash_at = crash_at
        self.calls = 0
        self._ids = itertools.count()
        self._live: dict[str, int] = {}
        """Each name in the directory now -> the identity of the file it names."""
        self._durable: dict[str, int] = {}
        """Each name as of the directory's last fsync."""
        self._pending: list[tuple[str, str, int]] = []
        """Renames and deletes since then, in order: (old name, new name or "", file)."""
        self._data: dict[int, bytes] = {}
        """Each file's data as of its last fsync."""
        for path in sorted(directory.iterdir()):
            identity = next(self._ids)
            self._live[path.name] = self._durable[path.name] = identity
            self._data[identity] = path.read_bytes()

    def _step(self) -> None:
        if self.crash_at is not None and self.calls >= self.crash_at:
            raise PowerLost(f"before disk call {self.calls}")
        self.calls += 1

    def _identity(self, name: str) -> int:
        """A name's file; one made since (a new file) gets its identity now."""
        if name not in self._live:
            self._live[name] = next(self._ids)
        return self._live[name]

    def rename(self, source: Path, target: Path) -> None:
        self._step()
        identity = self._identity(source.name)
        super().rename(source, target)
        del self._live[source.name]
        self._live[target.name] = identity
        self._pending.append((source.name, target.name, identity))

    def unlink(self, path: Path) -> None:
        self._step()
        existed = path.name in self._live
        super().unlink(path)
        if existed:
            self._pending.append((path.name, "", self._live.pop(path.name)))

    def fsync(self, path: Path) -> None:
        self._step()
        super().fsync(path)
        self._data[self._identity(path.name)] = path.read_bytes()

    def fsync_dir(self, directory: Path) -> None:
        self._step()
        super().fsync_dir(directory)
        if directory == self.directory:
            self._durable = self._applied(len(self._pending))
            self._pending = []

    def _applied(self, count: int) -> dict[str, int]:
        names = dict(self._durable)
        for old, new, identity in self._pending[:count]:
            names.pop(old, None)
            if new:
                names[new] = identity
        return names

    def aftermaths(self, root: Path) -> Iterator[Path]:
        """Every directory the power loss could have left, each made under ``root``."""
        for count in range(len(self._pending) + 1):
            directory = root / f"after-{count}-of-{len(self._pending)}"
            directory.mkdir(parents=True)
            for name, identity in self._applied(count).items():
                (directory / name).write_bytes(self._data.get(identity, b""))
            yield directory
