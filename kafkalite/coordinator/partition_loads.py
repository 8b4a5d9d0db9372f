"""Which partitions of its internal topic a coordinator serves, and which it is still loading.

A coordinator owns the partitions of its topic (``__transaction_state``) that its broker
leads. Taking one over means replaying it to its log end, which for a big partition takes
a while. The broker must keep serving everything else meanwhile, so the replay goes in
chunks, and a request for a key of a partition being replayed is answered
COORDINATOR_LOAD_IN_PROGRESS (the client retries shortly) rather than from state that is
only half rebuilt - Kafka's ``loadingPartitions``. Per partition::

    not ours --leads it in epoch e--> Loading(e) --log end reached--> Loaded(e)
       ^                                 |                               |
       +------- leadership lost ---------+-------------------------------+
    Loading(e) or Loaded(e) --leads it in a newer epoch e'--> Loading(e')

A newer epoch starts over: meanwhile another coordinator may have written to the log.
Pure: the coordinator reads and replays the log; this keeps the states and tells what a
request for the partition may do. Not thread-safe: owned by the coordinator's loop.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from kafkalite.protocol.errors import ErrorCode
from kafkalite.protocol.record_batch import RecordBatchHeader
from kafkalite.protocol.records import Record


@dataclass(frozen=True, slots=True)
class LogChunk:
    """One step of a load: whole batches (markers included: the group coordinator needs
    them) from where the previous step ended."""

    batches: list[tuple[RecordBatchHeader, list[Record]]]
    next_offset: int
    """Where the next step starts."""
    log_end_offset: int
    """The log end when this step read: the load is done once it reaches it (the end
    moves while a load runs - a marker may be written - and is read again each step)."""

    @property
    def is_last(self) -> bool:
        return self.next_offset >= self.log_end_offset


class LoadState(enum.Enum):
    LOADING = "loading"
    """Replaying the partition: requests for its keys get COORDINATOR_LOAD_IN_PROGRESS."""
    LOADED = "loaded"
    """Replayed to its log end: serving its keys."""


@dataclass(frozen=True, slots=True)
class OwnedPartition:
    coordinator_epoch: int
    """The partition's leader epoch this ownership belongs to."""
    state: LoadState


class PartitionLoads:
    def __init__(self) -> None:
        self._owned: dict[int, OwnedPartition] = {}

    def owned(self) -> dict[int, OwnedPartition]:
        return dict(self._owned)

    def needs_loading(self, partition: int, leader_epoch: int) -> bool:
        """This broker leads the partition in an epoch it has not begun loading in."""
        owned = self._owned.get(partition)
        return owned is None or owned.coordinator_epoch != leader_epoch

    def begin_loading(self, partition: int, leader_epoch: int) -> None:
        """Leading the partition (anew): whatever was loaded before no longer counts."""
        self._owned[partition] = OwnedPartition(leader_epoch, LoadState.LOADING)

    def is_loading(self, partition: int, leader_epoch: int) -> bool:
        """Still the load that began in ``leader_epoch`` (not superseded nor resigned)."""
        return self._owned.get(partition) == OwnedPartition(leader_epoch, LoadState.LOADING)

    def complete_loading(self, partition: int, leader_epoch: int) -> None:
        if not self.is_loading(partition, leader_epoch):
            raise RuntimeError(f"partition {partition} is not loading in epoch {leader_epoch}")
        self._owned[partition] = OwnedPartition(leader_epoch, LoadState.LOADED)

    def resign(self, partition: int) -> bool:
        """No longer the leader; True if the partition was owned."""
        return self._owned.pop(partition, None) is not None

    def loaded_epoch(self, partition: int) -> int | None:
        """The epoch the partition is loaded in; None while loading or not ours."""
        owned = self._owned.get(partition)
        return owned.coordinator_epoch if owned and owned.state == LoadState.LOADED else None

    def any_loading(self) -> bool:
        return any(o.state == LoadState.LOADING for o in self._owned.values())

    def error_for(self, partition: int, leader_epoch: int | None) -> ErrorCode:
        """What a request for a key of the partition gets: NONE (loaded in the epoch the
        broker leads it in), COORDINATOR_LOAD_IN_PROGRESS or NOT_COORDINATOR."""
        if leader_epoch is None:
            return ErrorCode.not_coordinator
        if self.loaded_epoch(partition) == leader_epoch:
            return ErrorCode.none
        return ErrorCode.coordinator_load_in_progress
