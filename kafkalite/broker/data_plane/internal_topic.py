"""The broker side of a coordinator's internal topic (``__consumer_offsets``,
``__transaction_state``): what a coordinator may ask of it.

Writes go through the normal leader append path with acks=all, so a coordinator's write is
acknowledged only once the high watermark covers it, exactly like a produced record.
Reads replay a partition to its log end, chunk by chunk, when a broker becomes its leader.
"""

from __future__ import annotations

from kafkalite.broker.control_plane_api import Controller
from kafkalite.broker.data_plane.replica_manager import ReplicaManager
from kafkalite.controller.topic_control import CreatableTopic
from kafkalite.coordinator.partition_loads import LogChunk
from kafkalite.metadata.image import MetadataImage
from kafkalite.protocol.errors import ErrorCode, KafkaError
from kafkalite.protocol.record_batch import iter_batches
from kafkalite.protocol.records import Record, build_batch, decode_records
from kafkalite.storage.errors import StorageError
from kafkalite.storage.producer_state import AppendOrigin

COMMIT_TIMEOUT_S = 10.0


class InternalTopic:
    """Reads its settings and leaders from the metadata image, its records through the
    replica manager; the controller creates it on first use."""

    def __init__(
        self,
        image: MetadataImage,
        replicas: ReplicaManager,
        controller: Controller,
        name: str,
        partitions_config: str,
        replication_config: str,
        segment_config: str,
        cluster_size: int,
    ) -> None:
        """``cluster_size``: the brokers of the cluster (``controller.quorum.voters``: every
        Kafka-Lite broker is a voter), known from the start."""
        self.cluster_size = cluster_size
        self.image = image
        self.replicas = replicas
        self.controller = controller
        self.name = name
        self.partitions_config = partitions_config
        self.replication_config = replication_config
        self.segment_config = segment_config

    def partition_count(self) -> int:
        topic = self.image.topic(self.name)
        if topic is not None:
            return len(topic.partitions)
        return self.image.broker_int(self.partitions_config)

    def leader_epoch(self, partition: int) -> int | None:
        found = self.replicas.partitions.get((self.name, partition))
        return found.leader_epoch if found is not None and found.is_leader else None

    def led_partitions(self) -> list[int]:
        return sorted(
            index
            for (name, index), p in self.replicas.partitions.items()
            if name == self.name and p.is_leader
        )

    def wanted_replicas(self) -> int:
        """The configured replication factor, at most the cluster's brokers (so that a
        one-broker lab works)."""
        return min(self.image.broker_int(self.replication_config), self.cluster_size)

    def replication_factor(self) -> int:
        """``wanted_replicas``, at most the brokers alive now: a lab that killed a broker
        before its first consumer group still gets its offsets (Kafka would refuse to
        create the topic until every broker is back)."""
        return min(self.wanted_replicas(), len(self.image.live_brokers()))

    def topic_configs(self, replication_factor: int) -> dict[str, str | None]:
        """Configs the topic is created with: compacted (the latest value per key counts,
        the log cleaner keeps it small), in segments of the broker's setting for it."""
        return {
            "cleanup.policy": "compact",
            "segment.bytes": self.image.broker_config(self.segment_config),
        }

    async def ensure_exists(self) -> None:
        """Create the topic on first use, as Kafka does on the first FindCoordinator."""
        image = self.image
        if image.topic(self.name) is not None:
            return
        if len(image.brokers) < self.wanted_replicas():
            # this broker has not yet replayed every broker's registration (at start-up,
            # under load): created now, the topic would get fewer replicas than the cluster
            # has. Not yet: FindCoordinator answers COORDINATOR_NOT_AVAILABLE, and the
            # client asks again.
            return
        rf = self.replication_factor()
        await self.controller.create_topics(
            [
                CreatableTopic(
                    self.name,
                    image.broker_int(self.partitions_config),
                    rf,
                    configs=self.topic_configs(rf),
                )
            ]
        )

    async def append(
        self,
        partition: int,
        records: list[Record],
        producer_id: int = -1,
        producer_epoch: int = -1,
    ) -> int:
        """Append one batch and wait until it is committed; its first offset. With a
        producer id, the batch is part of that producer's transaction (a transactional
        offset commit). Raises KafkaError (NOT_COORDINATOR if no longer the leader)."""
        replicas = self.replicas
        batch = build_batch(
            records,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            transactional=producer_id >= 0,
        )
        result = replicas.append_to_leader(
            self.name, partition, batch, -1, origin=AppendOrigin.COORDINATOR
        )
        if result.error == ErrorCode.none:
            await replicas.wait_for_acks([(self.name, partition, result)], COMMIT_TIMEOUT_S)
        if result.error != ErrorCode.none:
            code = (
                ErrorCode.not_coordinator
                if result.error
                in (ErrorCode.not_leader_or_follower, ErrorCode.unknown_topic_or_partition)
                else result.error
            )
            raise KafkaError(code, result.message)
        return result.base_offset

    def read_chunk(self, partition: int, start: int, max_bytes: int) -> LogChunk:
        """Whole batches from ``start`` (from the log start if below it; at least one
        batch, then up to ``max_bytes``) below the log end: one step of a coordinator's
        load. Raises KafkaError NOT_COORDINATOR when the replica is gone or truncated.

        Up to the log end, not the high watermark: a new leader's HW lags until its
        followers fetch, yet everything in its log is (or will be) committed - reading only
        to the HW would forget acknowledged writes (Kafka loads to the log end too)."""
        found = self.replicas.partitions.get((self.name, partition))
        if found is None:
            raise KafkaError(ErrorCode.not_coordinator)
        start, end = max(start, found.log_start_offset), found.log_end_offset
        if start >= end:
            return LogChunk([], end, end)
        try:
            data = found.log.read(start, max_bytes, end).records
        except StorageError as exc:
            raise KafkaError(ErrorCode.not_coordinator, str(exc)) from exc
        batches = [
            (header, [r for r in decode_records(data, pos) if r.offset >= start])
            for pos, header in iter_batches(data)
        ]
        return LogChunk(batches, batches[-1][0].next_offset if batches else end, end)
