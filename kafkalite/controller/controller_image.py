"""The controller's image: the committed metadata, plus the records of operations the
active controller has applied but the quorum has not yet committed.

As Kafka's ``QuorumController`` does, the active controller applies an operation's
records to its in-memory state as soon as it appends them, and answers the operation
once they are committed. The next operation is decided against an image that already
holds them (two CreateTopics of one name cannot both pass), without waiting for their
commit: operations pipeline, and a fence after a kill is not queued behind the commits
of a flood of AlterPartition.

A controller that loses its leadership may have applied records the quorum will never
commit (the new leader's log wins). It then reverts to the committed image (Kafka's
``SnapshotRegistry.revertToSnapshot`` at the last committed offset): ``revert``.

``committed`` is what snapshots are taken of; ``image`` is what operations are decided
against. Both are replayed from the same records, so they can never disagree about what
a record means. Pure; owned by the control plane's loop.
"""

from __future__ import annotations

from kafkalite.metadata.image import MetadataImage
from kafkalite.metadata.records import MetadataRecord


class ControllerImage:
    def __init__(self) -> None:
        self.committed = MetadataImage()
        self.image = MetadataImage()
        """Replaced in place, never rebound: the control managers hold it."""
        self.applied_end = -1
        """The offset of the last entry applied before it was committed (-1: none since
        the last revert). Committed entries up to it are in ``image`` already."""

    @property
    def has_uncommitted(self) -> bool:
        return self.applied_end > self.committed.offset

    def apply(self, offset: int, records: list[MetadataRecord]) -> None:
        """The active controller appended ``records`` at ``offset``: apply them now."""
        for record in records:
            self.image.replay(record, offset)
        self.applied_end = offset

    def replay_committed(self, offset: int, records: list[MetadataRecord]) -> None:
        """The entry at ``offset``, these records, was committed."""
        for record in records:
            self.committed.replay(record, offset)
            if offset > self.applied_end:  # not applied ahead: a follower's, or an old epoch's
                self.image.replay(record, offset)

    def load_snapshot(self, offset: int, records: list[MetadataRecord]) -> None:
        """A snapshot replaces everything (a follower that fell behind)."""
        self.committed.reload(offset, records)
        self.image.reload(offset, records)
        self.applied_end = -1

    def revert(self) -> None:
        """Forget what was applied but not committed: leadership was lost."""
        if self.has_uncommitted:
            self.image.reload(self.committed.offset, self.committed.to_records())
        self.applied_end = -1
