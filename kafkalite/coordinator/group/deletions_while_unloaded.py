"""Topics deleted while this broker led an offsets partition it had not loaded in that
leadership: its load was under way, or no group had asked for it yet (loading is lazy).

Why: a deleted topic's committed offsets are dropped by the coordinator that has them in
memory, which writes their tombstones (Kafka's ``onPartitionsDeleted``). A leader still
loading has nothing in memory to drop; without this its load brought the offsets back,
and a topic created again under the same name started its groups at the old offsets
(lab 05 re-run after a broker restart: "committed 30" on an empty topic).

Applying the deletion when the load completes is exact: while a partition is not loaded
its leader accepts no commits, so every offset it replays was written before the
deletion. Only the same leadership's load applies it: in a later one another coordinator
may have taken commits for a topic created again since.
"""

from __future__ import annotations


class DeletionsWhileUnloaded:
    def __init__(self) -> None:
        self._pending: dict[int, tuple[int, set[str]]] = {}
        """offsets partition -> (the leader epoch it was deleted in, the deleted topics)"""

    def remember(self, partition: int, leader_epoch: int, topic: str) -> None:
        epoch, topics = self._pending.get(partition, (leader_epoch, set()))
        if epoch != leader_epoch:  # an earlier leadership's, which never loaded
            topics = set()
        self._pending[partition] = (leader_epoch, topics | {topic})

    def take(self, partition: int, leader_epoch: int) -> set[str]:
        """The topics to drop now that ``partition`` is loaded in ``leader_epoch``."""
        epoch, topics = self._pending.pop(partition, (leader_epoch, set()))
        return topics if epoch == leader_epoch else set()
