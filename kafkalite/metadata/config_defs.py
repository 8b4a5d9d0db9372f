"""Every setting Kafka-Lite knows, under Kafka's name, with Kafka's default beside ours.

Kafka-Lite's defaults are tuned for a lab (small segments, failure detection in about a
second); each can be set back to Kafka's own with the same name. A topic setting falls back
to its broker synonym (``retention.ms`` -> ``log.retention.ms``), as in Kafka, so
DescribeConfigs can say where a value comes from. Settings Kafka accepts but Kafka-Lite does
not act on (``message.format.version``, ``flush.ms``, ...) are in ``accepted_configs``.

The definitions are in one module per resource type (``topic_configs``,
``broker_configs``, ``group_configs``); this module merges in the accepted ones and
validates a change against them.
"""

from __future__ import annotations

from collections.abc import Mapping

from kafkalite.metadata.accepted_configs import ACCEPTED_BROKER_CONFIGS, ACCEPTED_TOPIC_CONFIGS
from kafkalite.metadata.broker_configs import APPLIED_BROKER_CONFIGS
from kafkalite.metadata.config_def import ConfigDef, ConfigType, InvalidConfigError
from kafkalite.metadata.group_configs import GROUP_CONFIGS
from kafkalite.metadata.topic_configs import APPLIED_TOPIC_CONFIGS

__all__ = [
    "BROKER_CONFIGS",
    "GROUP_CONFIGS",
    "TOPIC_CONFIGS",
    "ConfigDef",
    "ConfigType",
    "InvalidConfigError",
    "validate_broker_configs",
    "validate_group_configs",
    "validate_topic_configs",
]


TOPIC_CONFIGS: dict[str, ConfigDef] = APPLIED_TOPIC_CONFIGS | {
    k: d for k, d in ACCEPTED_TOPIC_CONFIGS.items() if k not in APPLIED_TOPIC_CONFIGS
}
BROKER_CONFIGS: dict[str, ConfigDef] = APPLIED_BROKER_CONFIGS | {
    k: d for k, d in ACCEPTED_BROKER_CONFIGS.items() if k not in APPLIED_BROKER_CONFIGS
}


def _validate(
    table: Mapping[str, ConfigDef], kind: str, configs: Mapping[str, str | None], static: bool
) -> None:
    for name, value in configs.items():
        definition = table.get(name)
        if definition is None:
            raise InvalidConfigError(name, value, f"unknown {kind} configuration")
        if definition.read_only and not static:
            raise InvalidConfigError(name, value, "cannot be changed while the broker runs")
        definition.validate(value)


def validate_topic_configs(configs: Mapping[str, str | None]) -> None:
    _validate(TOPIC_CONFIGS, "topic", configs, static=False)


def validate_group_configs(configs: Mapping[str, str | None]) -> None:
    _validate(GROUP_CONFIGS, "group", configs, static=False)


def validate_broker_configs(configs: Mapping[str, str | None], static: bool = False) -> None:
    """``static``: settings given at start-up, where read-only ones are allowed."""
    _validate(BROKER_CONFIGS, "broker", configs, static)
