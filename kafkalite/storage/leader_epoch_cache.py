"""The leader-epoch cache: at which offset each leader epoch began on this replica.

Kafka's ``leader-epoch-checkpoint`` file, same layout::

    0                 version
    2                 number of entries
    0 0               epoch start_offset
    3 120

It answers OffsetForLeaderEpoch ("where did epoch N end?"), which is how a returning
replica learns how much of its log the new leader never had, and truncates exactly that.
"""

from __future__ import annotations

from pathlib import Path

from kafkalite.storage.checkpoint import write_atomically

UNDEFINED = (-1, -1)


class LeaderEpochCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: list[tuple[int, int]] = []
        if path.exists():
            lines = path.read_text().split("\n")
            count = int(lines[1])
            for line in lines[2 : 2 + count]:
                epoch, start = line.split()
                self.entries.append((int(epoch), int(start)))

    @property
    def latest_epoch(self) -> int:
        return self.entries[-1][0] if self.entries else -1

    def assign(self, epoch: int, start_offset: int) -> None:
        """Record that ``epoch`` starts at ``start_offset`` (no-op if already known)."""
        if epoch < 0 or (self.entries and self.entries[-1][0] >= epoch):
            return
        self.entries = [(e, s) for e, s in self.entries if s < start_offset]
        self.entries.append((epoch, start_offset))
        self._save()

    def end_offset_for(self, epoch: int, log_end_offset: int) -> tuple[int, int]:
        """``(epoch, end offset)`` as OffsetForLeaderEpoch defines it.

        For the latest epoch: the log end offset. For an older one: the start offset of the
        first later epoch, reported with the largest known epoch <= the requested one.
        """
        if not self.entries or epoch < self.entries[0][0]:
            return UNDEFINED
        if epoch >= self.latest_epoch:
            return self.latest_epoch, log_end_offset
        for i, (known, _) in enumerate(self.entries):
            later = self.entries[i + 1]
            if later[0] > epoch:
                return known, later[1]
        return UNDEFINED

    def truncate_from_end(self, end_offset: int) -> None:
        """Forget epochs that start at or after ``end_offset`` (the log was truncated)."""
        kept = [(e, s) for e, s in self.entries if s < end_offset]
        if kept != self.entries:
            self.entries = kept
            self._save()

    def truncate_from_start(self, start_offset: int) -> None:
        """The log start moved: the epoch covering it now starts there."""
        covering = [(e, s) for e, s in self.entries if s <= start_offset]
        later = [(e, s) for e, s in self.entries if s > start_offset]
        kept = ([(covering[-1][0], start_offset)] if covering else []) + later
        if kept != self.entries:
            self.entries = kept
            self._save()

    def clear(self) -> None:
        """Forget every epoch: the log was emptied and restarts at its leader's log start."""
        if self.entries:
            self.entries = []
            self._save()

    def epoch_for_offset(self, offset: int) -> int:
        epoch = -1
        for e, s in self.entries:
            if s <= offset:
                epoch = e
        return epoch

    def _save(self) -> None:
        body = "".join(f"{e} {s}\n" for e, s in self.entries)
        write_atomically(self.path, f"0\n{len(self.entries)}\n{body}")
