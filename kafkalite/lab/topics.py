"""The topic verbs of a :class:`~kafkalite.lab.lab.Lab`: create a topic afresh, change
its settings live, read them back, each through a kafka-python admin client.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence

import pandas as pd
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewTopic
from kafka.errors import TopicAlreadyExistsError

from kafkalite.lab.waits import WAIT_S, LabTimeoutError, wait_for

CREATE_ATTEMPTS = 3


class TopicAdmin:
    """Topics and their settings, as methods of the ``Lab`` that inherits them."""

    live_bootstrap_servers: Callable[[], str]
    """The brokers a new client bootstraps from (``Lab.live_bootstrap_servers``)."""
    partitions: Callable[[str], pd.DataFrame]
    """A topic's partitions as the cluster reports them now (``Lab.partitions``)."""

    @contextlib.contextmanager
    def admin(self) -> Iterator[KafkaAdminClient]:
        """A kafka-python admin client for one task. A fresh one each time: a long-lived
        client keeps asking the controller it first knew, even after it was killed."""
        admin = KafkaAdminClient(
            bootstrap_servers=self.live_bootstrap_servers(),
            client_id="kafkalite-lab-admin",
            request_timeout_ms=10000,
        )
        try:
            yield admin
        finally:
            admin.close()

    def create_topic(
        self,
        name: str,
        partitions: int = 1,
        replication_factor: int = 3,
        configs: Mapping[str, str] | None = None,
        replicas: Sequence[Sequence[int]] | None = None,
    ) -> None:
        """Create ``name`` afresh (an existing topic of that name is deleted first, so a
        lab re-runs from a clean log) and wait until every partition is led and in sync.
        ``replicas`` places each partition's replicas, the first as preferred leader.

        A client still open on the old topic (a producer or consumer of an earlier cell)
        refreshes its metadata every few seconds, and the broker creates a topic it asks
        for that does not exist (``auto.create.topics.enable``; kafka-python 3.0 asks so
        whatever its ``allow_auto_create_topics`` says): if it did so between the delete
        and the create, the topic has the broker's default shape, and is made again."""
        topic = NewTopic(
            name,
            partitions if replicas is None else -1,
            replication_factor if replicas is None else -1,
            replica_assignments=None if replicas is None else dict(enumerate(replicas)),
            topic_configs=dict(configs or {}),
        )
        expected = partitions if replicas is None else len(replicas)
        sizes = [replication_factor] * expected if replicas is None else list(map(len, replicas))
        for _ in range(CREATE_ATTEMPTS):
            with self.admin() as admin:
                exists = name in admin.list_topics()
            if exists:
                self._delete_topic(name)
            # "already exists": our own first attempt may have created it too (kafka-python
            # sends CreateTopics again after a NOT_CONTROLLER answer); the shape tells
            with self.admin() as admin, contextlib.suppress(TopicAlreadyExistsError):
                admin.create_topics([topic])
            shape = wait_for(lambda: self._settled_shape(name, sizes), WAIT_S, f"{name} to be led")
            if shape == sizes:
                break
        else:
            raise LabTimeoutError(
                f"{name} was made again {CREATE_ATTEMPTS} times by another client as it was "
                "created: close the producers and consumers still using it, and run again"
            )
        wait_for(lambda: self._in_sync(name), WAIT_S, f"{name}'s partitions to be led and in sync")

    def _settled_shape(self, name: str, sizes: list[int]) -> list[int] | None:
        """Each partition's replication factor once every partition has a leader; None
        while the topic is still appearing as asked (``sizes``)."""
        rows = self.partitions(name).sort_values("partition")
        if rows.empty or rows["leader"].isna().any():
            return None
        shape = list(rows["replicas"].map(len))
        if len(shape) < len(sizes) and shape == sizes[: len(shape)]:
            return None  # the rest is on its way
        return shape

    def _in_sync(self, name: str) -> bool:
        rows = self.partitions(name)
        return bool((rows["isr"].map(len) == rows["replicas"].map(len)).all())

    def _delete_topic(self, name: str) -> None:
        """Delete ``name`` (its groups' committed offsets go with it, as in Kafka). Deleted
        means that topic id is gone: a client still open may already have made the name
        again (see ``create_topic``)."""
        deleted = self._topic_id(name)
        with self.admin() as admin:
            admin.delete_topics([name])
        wait_for(lambda: self._topic_id(name) != deleted, WAIT_S, f"{name} to be deleted")

    def _topic_id(self, name: str) -> str | None:
        """The id of the topic called ``name`` now (None: there is none)."""
        with self.admin() as admin:
            found = admin.describe_topics([name])[0]
        return str(found["topic_id"]) if found["error_code"] == 0 else None

    def set_config(self, topic: str, configs: Mapping[str, str]) -> None:
        """Change topic settings live (IncrementalAlterConfigs), e.g.
        ``lab.set_config("orders", {"min.insync.replicas": "3"})``."""
        resource = ConfigResource(ConfigResourceType.TOPIC, topic, configs=dict(configs))
        with self.admin() as admin:
            admin.alter_configs([resource], incremental=True)

    def topic_config(self, topic: str) -> dict[str, str]:
        """The topic's settings as the cluster reports them (defaults included)."""
        resource = ConfigResource(ConfigResourceType.TOPIC, topic)
        with self.admin() as admin:
            described = admin.describe_configs([resource], config_filter="all")
        return {name: entry["value"] for name, entry in described["topic"][topic].items()}
