"""What the consumer-group coordinator (KIP-848) reads from this broker's metadata image:
the topics its members subscribe to, and its settings (a group's own override first, then
the broker's)."""

from __future__ import annotations

from collections.abc import Iterable

from kafkalite.coordinator.group.consumer_group import TopicMetadata
from kafkalite.coordinator.group.consumer_group_config import ConsumerGroupConfig
from kafkalite.coordinator.group.group_migration import MigrationPolicy
from kafkalite.metadata.image import MetadataImage


class ImageTopics:
    """The topics of the metadata image, as the coordinator's ``TopicsView``."""

    def __init__(self, image: MetadataImage) -> None:
        self._image = image

    def topic_names(self) -> Iterable[str]:
        return list(self._image.topic_ids)

    def describe(self, name: str) -> TopicMetadata | None:
        topic = self._image.topic(name)
        return None if topic is None else TopicMetadata(topic.topic_id, name, len(topic.partitions))

    def topic_name(self, topic_id: str) -> str | None:
        topic = self._image.topics_by_id.get(topic_id)
        return None if topic is None else topic.name


def consumer_group_config(
    image: MetadataImage, migration_policy: MigrationPolicy
) -> ConsumerGroupConfig:
    """``migration_policy`` is read at start-up (read-only in Kafka as here)."""

    def group_setting(group_id: str, name: str, broker_name: str) -> int:
        own = image.group_configs.get(group_id, {}).get(name)
        return int(own) if own is not None else image.broker_int(broker_name)

    return ConsumerGroupConfig(
        session_timeout_ms=lambda group_id: group_setting(
            group_id, "consumer.session.timeout.ms", "group.consumer.session.timeout.ms"
        ),
        heartbeat_interval_ms=lambda group_id: group_setting(
            group_id, "consumer.heartbeat.interval.ms", "group.consumer.heartbeat.interval.ms"
        ),
        assignors=lambda: [
            a.strip()
            for a in image.broker_config("group.consumer.assignors").split(",")
            if a.strip()
        ],
        max_size=lambda: image.broker_int("group.consumer.max.size"),
        migration_policy=lambda: migration_policy,
    )
