"""Each consumer group's committed offsets and members, read with a real admin client
(confluent-kafka).

Committed offsets live in ``__consumer_offsets`` and members in the group coordinator, not
in ``/state``: the dashboard asks for them as any Kafka tool would (ListGroups,
OffsetFetch, DescribeGroups), on its own thread and less often than it refreshes, every
call bounded, so a slow coordinator never delays a refresh.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from confluent_kafka import ConsumerGroupTopicPartitions
from confluent_kafka.admin import AdminClient

from kafkalite.lab.dashboard.model import GroupOffset
from kafkalite.lab.group_members import GroupView, describe_groups

GroupOffsets = Mapping[tuple[str, int], list[GroupOffset]]


class GroupOffsetReader:
    def __init__(
        self, bootstrap_servers: str, interval_s: float = 2.0, timeout_s: float = 2.0
    ) -> None:
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self._admin = AdminClient(
            {
                "bootstrap.servers": bootstrap_servers,
                "socket.timeout.ms": int(timeout_s * 1000),
                "log_level": 0,  # a dead broker is shown on its card, not logged every second
            }
        )
        self._latest: dict[tuple[str, int], list[GroupOffset]] = {}
        self._groups: tuple[GroupView, ...] = ()
        self.last_error: str | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def latest(self) -> GroupOffsets:
        return self._latest

    def latest_groups(self) -> tuple[GroupView, ...]:
        return self._groups

    def read(self) -> GroupOffsets:
        """Every group's committed offset per partition (groups without any are left out),
        and (``latest_groups``) every group's members and their assignment."""
        listed = self._admin.list_consumer_groups(request_timeout=self.timeout_s)
        groups = sorted(g.group_id for g in listed.result(timeout=self.timeout_s * 2).valid)
        self._groups = describe_groups(self._admin, groups, self.timeout_s)
        found: dict[tuple[str, int], list[GroupOffset]] = {}
        for group in groups:
            request = [ConsumerGroupTopicPartitions(group)]
            futures = self._admin.list_consumer_group_offsets(
                request, request_timeout=self.timeout_s
            )
            answer: Any = futures[group].result(timeout=self.timeout_s * 2)
            for tp in answer.topic_partitions:
                if tp.offset >= 0 and tp.error is None:
                    found.setdefault((tp.topic, tp.partition), []).append(
                        GroupOffset(group, tp.offset)
                    )
        self._latest = found
        return found

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="kafkalite-groups", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                self.read()
                self.last_error = None
            except Exception as exc:  # no coordinator right now: keep the last answer
                self.last_error = f"{type(exc).__name__}: {exc}"
            self._stopping.wait(self.interval_s)
