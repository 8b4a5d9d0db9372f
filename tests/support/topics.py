"""Create a topic the way a confluent-kafka (librdkafka) user would, and wait for it."""

from __future__ import annotations

from confluent_kafka.admin import AdminClient, NewTopic


def create_topic(
    bootstrap: str, name: str, partitions: int, rf: int, configs: dict[str, str] | None = None
) -> None:
    """CreateTopics through any broker; raises the admin client's error if it fails."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    future = admin.create_topics([NewTopic(name, partitions, rf, config=configs or {})])[name]
    future.result(timeout=30)
