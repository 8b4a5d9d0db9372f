"""Brokers (Kafka's ``ClusterControlManager`` with the liveness half of its heartbeat
manager): registration, heartbeats, fencing and unfencing. What a broker's coming and going
does to partitions is the replication manager's (``PartitionChanges``).
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkalite.controller.replication_control import ReplicationControlManager
from kafkalite.controller.results import ControllerResult
from kafkalite.metadata.image import MetadataImage
from kafkalite.metadata.records import (
    FenceBrokerRecord,
    RegisterBrokerRecord,
    UnfenceBrokerRecord,
)
from kafkalite.protocol.errors import ErrorCode


@dataclass(frozen=True, slots=True)
class HeartbeatReply:
    error: ErrorCode
    is_caught_up: bool = False
    is_fenced: bool = True
    should_shut_down: bool = False


class ClusterControlManager:
    def __init__(self, image: MetadataImage, replication: ReplicationControlManager) -> None:
        self.image = image
        self.replication = replication

    def register_broker(
        self,
        broker_id: int,
        host: str,
        port: int,
        rack: str | None,
        incarnation_id: str,
        next_offset: int,
    ) -> ControllerResult[int]:
        """A (re)starting broker registers; its epoch is the offset of its record.

        A broker that comes back (after a crash, say) may have lost records it had not yet
        flushed, so first it gives up whatever it led and leaves the ISRs, as if fenced; it
        then leads again only through an election (a new leader epoch) and rejoins ISRs by
        catching up, like any follower.
        """
        epoch = next_offset
        changes = self.replication.changes()
        live = self.image.live_broker_ids() - {broker_id}
        if broker_id in self.image.brokers:
            changes.without_broker(broker_id, live)
        changes.records.append(
            RegisterBrokerRecord(broker_id, host, port, rack, incarnation_id, epoch)
        )
        changes.records.append(UnfenceBrokerRecord(broker_id, epoch))
        live.add(broker_id)
        changes.elect_offline(live)
        return ControllerResult(changes.records, epoch)

    def heartbeat(
        self,
        broker_id: int,
        broker_epoch: int,
        metadata_offset: int,
        want_fence: bool,
        want_shut_down: bool,
    ) -> ControllerResult[HeartbeatReply]:
        """A heartbeat keeps a broker's session; one asking to shut down first hands its
        leaderships and ISR places to the others (controlled shutdown)."""
        current = self.image.brokers.get(broker_id)
        if current is None or current.broker_epoch != broker_epoch:
            return ControllerResult([], HeartbeatReply(ErrorCode.stale_broker_epoch))
        caught_up = metadata_offset >= broker_epoch
        if want_shut_down or want_fence:
            records = [] if current.fenced else self.fence_broker(broker_id).records
            return ControllerResult(
                records, HeartbeatReply(ErrorCode.none, caught_up, True, want_shut_down)
            )
        if current.fenced and caught_up:
            changes = self.replication.changes()
            changes.records.append(UnfenceBrokerRecord(broker_id, broker_epoch))
            live = self.image.live_broker_ids() | {broker_id}
            changes.elect_offline(live)
            return ControllerResult(changes.records, HeartbeatReply(ErrorCode.none, True, False))
        return ControllerResult([], HeartbeatReply(ErrorCode.none, caught_up, current.fenced))

    def fence_broker(self, broker_id: int) -> ControllerResult[None]:
        """No heartbeat for ``broker.session.timeout.ms`` (or a controlled shutdown): the
        broker leaves every ISR it can and its partitions get new leaders."""
        current = self.image.brokers[broker_id]
        changes = self.replication.changes()
        live = self.image.live_broker_ids() - {broker_id}
        changes.without_broker(broker_id, live)
        changes.records.insert(0, FenceBrokerRecord(broker_id, current.broker_epoch))
        return ControllerResult(changes.records, None)
