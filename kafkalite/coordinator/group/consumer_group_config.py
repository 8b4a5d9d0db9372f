"""What a KIP-848 consumer group's coordinator reads from the broker's configuration, each
read when it is needed (a topic's or the broker's config may change while groups live).

A module of its own so that the coordinator and the pieces it delegates to
(``group_conversion``) import it without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kafkalite.coordinator.group.group_migration import MigrationPolicy


@dataclass(frozen=True, slots=True)
class ConsumerGroupConfig:
    session_timeout_ms: Callable[[str], int]
    """Of a group: its ``consumer.session.timeout.ms``, else the broker's."""
    heartbeat_interval_ms: Callable[[str], int]
    assignors: Callable[[], list[str]]
    """``group.consumer.assignors``: the offered ones, the first the default."""
    max_size: Callable[[], int]
    migration_policy: Callable[[], MigrationPolicy] = lambda: MigrationPolicy.BIDIRECTIONAL
    """``group.consumer.migration.policy``: may groups change protocols with members in."""
