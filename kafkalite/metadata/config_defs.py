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

from collections.abc import Iterable, Mapping
from dataclasses import replace

from kafkalite.metadata.accepted_configs import ACCEPTED_BROKER_CONFIGS, ACCEPTED_TOPIC_CONFIGS
from kafkalite.metadata.broker_configs import APPLIED_BROKER_CONFIGS, IDENTITY_CONFIG_NAMES
from kafkalite.metadata.config_def import ConfigDef, ConfigType, InvalidConfigError, UpdateMode
from kafkalite.metadata.group_configs import GROUP_CONFIGS
from kafkalite.metadata.topic_configs import APPLIED_TOPIC_CONFIGS

__all__ = [
    "BROKER_CONFIGS",
    "GROUP_CONFIGS",
    "TOPIC_CONFIGS",
    "ConfigDef",
    "ConfigType",
    "InvalidConfigError",
    "UpdateMode",
    "dynamic_broker_change_error",
    "incremental_value",
    "validate_broker_configs",
    "validate_group_configs",
    "validate_topic_configs",
]


TOPIC_CONFIGS: dict[str, ConfigDef] = APPLIED_TOPIC_CONFIGS | {
    k: d for k, d in ACCEPTED_TOPIC_CONFIGS.items() if k not in APPLIED_TOPIC_CONFIGS
}


def _kafka_update_mode(definition: ConfigDef) -> ConfigDef:
    """An applied broker setting with Kafka's update mode (read-only for Kafka-Lite's own
    start-up-only settings, which Kafka does not have)."""
    kafka = ACCEPTED_BROKER_CONFIGS.get(definition.name)
    if kafka is not None:
        return replace(definition, update_mode=kafka.update_mode)
    if definition.read_only:
        return replace(definition, update_mode=UpdateMode.READ_ONLY)
    return definition


BROKER_CONFIGS: dict[str, ConfigDef] = {
    k: _kafka_update_mode(d) for k, d in APPLIED_BROKER_CONFIGS.items()
} | {k: d for k, d in ACCEPTED_BROKER_CONFIGS.items() if k not in APPLIED_BROKER_CONFIGS}


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


def dynamic_broker_change_error(resource_name: str, names: Iterable[str]) -> str | None:
    """Why Kafka refuses to set ``names`` live on the broker resource ``resource_name``
    (``""``: every broker's default), in its words (``DynamicBrokerConfig.validateConfigs``,
    answered INVALID_REQUEST); None when it accepts them. A start-up setting cannot change
    while the broker runs, and a per-broker one has no cluster-wide default."""
    known = [n for n in names if n in BROKER_CONFIGS]
    read_only = [n for n in names if n in IDENTITY_CONFIG_NAMES] + [
        n for n in known if BROKER_CONFIGS[n].update_mode is UpdateMode.READ_ONLY
    ]
    if read_only:
        return f"Cannot update these configs dynamically: Set({', '.join(read_only)})"
    per_broker = [n for n in known if BROKER_CONFIGS[n].update_mode is UpdateMode.PER_BROKER]
    if not resource_name and per_broker:
        return (
            "Cannot update these configs at default cluster level, broker id must be "
            f"specified: Set({', '.join(per_broker)})"
        )
    return None


def incremental_value(
    definition: ConfigDef, current: str | None, append: bool, delta: str | None
) -> str:
    """IncrementalAlterConfigs APPEND or SUBTRACT on a list setting, as Kafka's
    ``ConfigurationControlManager`` does it: against the current value, or the setting's
    default when it has none (append ``compact`` to the default ``delete`` gives
    ``delete,compact``). Any other type: InvalidConfigError."""
    if definition.type is not ConfigType.LIST:
        operation = "APPEND" if append else "SUBTRACT"
        raise InvalidConfigError(
            definition.name,
            delta,
            f"Can't {operation} to key {definition.name} because its type is not LIST.",
        )
    items = [x for x in (definition.default if current is None else current).split(",") if x]
    for value in (delta or "").split(","):
        if append and value not in items:
            items.append(value)
        elif not append and value in items:
            items.remove(value)
    return ",".join(items)
