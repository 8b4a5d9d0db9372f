"""The topic panel: a topic's replication factor, ``min.insync.replicas`` and
``unclean.leader.election.enable``, read and changed with a real admin client
(confluent-kafka: DescribeConfigs, IncrementalAlterConfigs, CreateTopics).

Kafka cannot change a topic's replication factor without a reassignment, so RF is shown
for existing topics and chosen when a new topic is created here. Admin calls run on a
worker thread with bounded timeouts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from html import escape
from typing import Any

import ipywidgets as w
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
)

ADMIN_TIMEOUT_S = 10.0
LABEL_WIDTH = {"description_width": "initial"}
SETTINGS = ("min.insync.replicas", "unclean.leader.election.enable")


class TopicPanel(w.VBox):  # type: ignore[misc]
    def __init__(self, bootstrap_servers: str) -> None:
        self._admin = AdminClient({"bootstrap.servers": bootstrap_servers, "log_level": 0})
        self.topic = w.Dropdown(
            options=[], description="topic", style=LABEL_WIDTH, layout=w.Layout(width="240px")
        )
        self.rf = w.HTML(layout=w.Layout(width="auto"))
        self.min_isr = w.BoundedIntText(
            1,
            min=1,
            max=16,
            description="min.insync.replicas",
            style=LABEL_WIDTH,
            layout=w.Layout(width="170px"),
        )
        self.unclean = w.Checkbox(
            False,
            description="unclean.leader.election.enable",
            indent=False,
            layout=w.Layout(width="auto"),
        )
        self.apply = w.Button(description="apply", layout=w.Layout(width="auto"))
        self.new_name = w.Text("", placeholder="new topic", layout=w.Layout(width="140px"))
        self.new_partitions = w.BoundedIntText(
            1,
            min=1,
            max=64,
            description="partitions",
            style=LABEL_WIDTH,
            layout=w.Layout(width="130px"),
        )
        self.new_rf = w.BoundedIntText(
            3, min=1, max=16, description="RF", style=LABEL_WIDTH, layout=w.Layout(width="90px")
        )
        self.create = w.Button(description="create topic", layout=w.Layout(width="auto"))
        self.message = w.HTML()
        self.apply.add_class("kl-topic-apply")
        self.create.add_class("kl-topic-create")
        self.topic.observe(lambda _c: self._in_background(self._load), names="value")
        self.apply.on_click(lambda _b: self._in_background(self._apply))
        self.create.on_click(lambda _b: self._in_background(self._create))
        self._replication: dict[str, int] = {}
        super().__init__(
            [
                w.HBox([self.topic, self.rf, self.min_isr, self.unclean, self.apply]),
                w.HBox([self.new_name, self.new_partitions, self.new_rf, self.create]),
                self.message,
            ]
        )

    def show_topics(self, replication: dict[str, int]) -> None:
        """At each refresh: the topics the cluster has and each one's replication factor."""
        self._replication = replication
        names = sorted(replication)
        if list(self.topic.options) != names:
            current = self.topic.value
            self.topic.options = names
            self.topic.value = current if current in names else (names[0] if names else None)
        rf = replication.get(self.topic.value or "")
        text = f"replication factor <b>{rf}</b>&nbsp;" if rf is not None else ""
        if self.rf.value != text:
            self.rf.value = text

    def _in_background(self, job: Callable[[], str]) -> None:
        def run() -> None:
            try:
                self.message.value = escape(job())
            except Exception as exc:  # the admin client's error, in one line
                self.message.value = (
                    f'<span style="color:#c62828">{escape(type(exc).__name__)}: '
                    f"{escape(str(exc))}</span>"
                )

        threading.Thread(target=run, daemon=True).start()

    def _load(self) -> str:
        topic = self.topic.value
        if not topic:
            return ""
        resource = ConfigResource(ConfigResource.Type.TOPIC, topic)
        futures = self._admin.describe_configs([resource], request_timeout=ADMIN_TIMEOUT_S)
        configs: dict[str, Any] = futures[resource].result(timeout=ADMIN_TIMEOUT_S)
        self.min_isr.value = int(configs["min.insync.replicas"].value)
        self.unclean.value = configs["unclean.leader.election.enable"].value == "true"
        return f"{topic}: loaded its settings"

    def _apply(self) -> str:
        topic = self.topic.value
        if not topic:
            return "choose a topic first"
        values = {
            "min.insync.replicas": str(self.min_isr.value),
            "unclean.leader.election.enable": str(self.unclean.value).lower(),
        }
        entries = [
            ConfigEntry(name, value, incremental_operation=AlterConfigOpType.SET)
            for name, value in values.items()
        ]
        resource = ConfigResource(ConfigResource.Type.TOPIC, topic, incremental_configs=entries)
        futures = self._admin.incremental_alter_configs([resource], request_timeout=ADMIN_TIMEOUT_S)
        futures[resource].result(timeout=ADMIN_TIMEOUT_S)
        return f"{topic}: " + ", ".join(f"{k}={v}" for k, v in values.items())

    def _create(self) -> str:
        name = self.new_name.value.strip()
        if not name:
            return "name the new topic first"
        topic = NewTopic(name, int(self.new_partitions.value), int(self.new_rf.value))
        futures = self._admin.create_topics([topic], request_timeout=ADMIN_TIMEOUT_S)
        futures[name].result(timeout=ADMIN_TIMEOUT_S)
        return f"created {name}"
