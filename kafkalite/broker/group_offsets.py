"""The broker side of ``__consumer_offsets``: what the group coordinator may ask of it.

Commits go through the normal leader append path with acks=all, so a commit is
acknowledged only once the high watermark covers it, exactly like a produced record.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkalite.controller.quorum_controller import CreatableTopic
from kafkalite.coordinator.group.offsets_log import OFFSETS_TOPIC
from kafkalite.protocol.errors import ErrorCode, KafkaError
from kafkalite.protocol.records import Record, build_batch

if TYPE_CHECKING:
    from kafkalite.broker.broker import Broker

COMMIT_TIMEOUT_S = 10.0


class BrokerOffsetsTopic:
    def __init__(self, broker: Broker) -> None:
        self.broker = broker

    def partition_count(self) -> int:
        topic = self.broker.image.topic(OFFSETS_TOPIC)
        if topic is not None:
            return len(topic.partitions)
        return int(self.broker.image.broker_config("offsets.topic.num.partitions"))

    def leader_epoch(self, partition: int) -> int | None:
        found = self.broker.replica_manager.partitions.get((OFFSETS_TOPIC, partition))
        return found.leader_epoch if found is not None and found.is_leader else None

    async def ensure_exists(self) -> None:
        """Create the topic on first use, as Kafka does on the first FindCoordinator."""
        image = self.broker.image
        if image.topic(OFFSETS_TOPIC) is not None:
            return
        rf = min(
            int(image.broker_config("offsets.topic.replication.factor")), len(image.live_brokers())
        )
        await self.broker.controller.create_topics(
            [
                CreatableTopic(
                    OFFSETS_TOPIC,
                    int(image.broker_config("offsets.topic.num.partitions")),
                    rf,
                    configs={"cleanup.policy": "compact"},
                )
            ]
        )

    async def append(self, partition: int, records: list[Record]) -> None:
        replicas = self.broker.replica_manager
        result = replicas.append_to_leader(OFFSETS_TOPIC, partition, build_batch(records), -1)
        if result.error == ErrorCode.none:
            await replicas.wait_for_acks([(OFFSETS_TOPIC, partition, result)], COMMIT_TIMEOUT_S)
        if result.error != ErrorCode.none:
            code = (
                ErrorCode.not_coordinator
                if result.error
                in (ErrorCode.not_leader_or_follower, ErrorCode.unknown_topic_or_partition)
                else result.error
            )
            raise KafkaError(code, result.message)

    def read_all(self, partition: int) -> list[Record]:
        found = self.broker.replica_manager.partitions.get((OFFSETS_TOPIC, partition))
        if found is None:
            return []
        # Up to the log end, not the high watermark: a new leader's HW lags until its
        # followers fetch, yet everything in its log is (or will be) committed - reading
        # only to the HW would forget acknowledged commits (Kafka loads to the log end too).
        return list(found.log.records_between(found.log_start_offset, found.log_end_offset))
