"""Where each setting's value comes from, as DescribeConfigs reports it.

Kafka resolves a broker setting in this order, and names the winner's source::

    DYNAMIC_BROKER_CONFIG          set live for this broker      (IncrementalAlterConfigs)
    DYNAMIC_DEFAULT_BROKER_CONFIG  set live for every broker     (resource name "")
    STATIC_BROKER_CONFIG           given at start-up             (server.properties, --config)
    DEFAULT_CONFIG                 the built-in default

A topic setting is its own override (DYNAMIC_TOPIC_CONFIG) or else its broker synonym's
value (``retention.ms`` falls back to ``log.retention.ms``); a group setting is its own
(GROUP_CONFIG) or the default. With ``include_synonyms`` the client also gets every
candidate in that order, which is how a student sees why a value won.

Kafka-Lite promotes start-up settings that may change live to cluster-wide dynamic
defaults (so the controller, on whichever broker it runs, uses them): those are reported
as DYNAMIC_DEFAULT_BROKER_CONFIG, with the start-up value as a STATIC_BROKER_CONFIG
synonym. Settings that cannot change live (``advertised.listeners``, ``broker.rack``,
``node.id``, ...) are STATIC_BROKER_CONFIG. Pure functions over the metadata image.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum

from kafkalite.metadata.config_def import ConfigDef, ConfigType, UpdateMode
from kafkalite.metadata.config_defs import BROKER_CONFIGS, GROUP_CONFIGS, TOPIC_CONFIGS
from kafkalite.metadata.image import MetadataImage

IDENTITY_CONFIGS: dict[str, ConfigDef] = {
    d.name: d
    for d in (
        ConfigDef(name, kind, "", default, doc, read_only=True, update_mode=UpdateMode.READ_ONLY)
        for name, kind, default, doc in (
            ("node.id", ConfigType.INT, "-1", "this broker's id (its --id)"),
            ("broker.id", ConfigType.INT, "-1", "this broker's id (its --id)"),
            ("process.roles", ConfigType.LIST, "", "broker,controller: every broker is a voter"),
            ("listeners", ConfigType.LIST, "PLAINTEXT://:9092", "where the broker listens"),
            ("log.dirs", ConfigType.LIST, "/tmp/kafka-logs", "where partitions are stored"),
        )
    )
}
"""Who a broker is, fixed by how it was started (not by ``--config``): always reported as
STATIC_BROKER_CONFIG, with the values the broker passes in its ``static`` settings."""


class ConfigSource(IntEnum):
    """Kafka's ``ConfigSource`` codes in DescribeConfigs responses."""

    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    GROUP_CONFIG = 8


@dataclass(frozen=True, slots=True)
class Synonym:
    name: str
    value: str
    source: ConfigSource


@dataclass(frozen=True, slots=True)
class DescribedConfig:
    name: str
    value: str
    source: ConfigSource
    synonyms: tuple[Synonym, ...]
    definition: ConfigDef

    @property
    def is_default(self) -> bool:
        return self.source == ConfigSource.DEFAULT_CONFIG


def _broker_candidates(
    image: MetadataImage, broker_id: int, static: Mapping[str, str], name: str
) -> list[Synonym]:
    """Every place ``name`` is set for broker ``broker_id``, winner first."""
    found = []
    per_broker = image.broker_configs.get(str(broker_id), {})
    if name in per_broker:
        found.append(Synonym(name, per_broker[name], ConfigSource.DYNAMIC_BROKER_CONFIG))
    cluster_wide = image.broker_configs.get("", {})
    if name in cluster_wide:
        found.append(Synonym(name, cluster_wide[name], ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG))
    if name in static:
        found.append(Synonym(name, static[name], ConfigSource.STATIC_BROKER_CONFIG))
    if name in BROKER_CONFIGS:
        found.append(Synonym(name, BROKER_CONFIGS[name].default, ConfigSource.DEFAULT_CONFIG))
    return found


def describe_broker(
    image: MetadataImage, broker_id: int, static: Mapping[str, str]
) -> list[DescribedConfig]:
    """Every broker setting of ``broker_id``; ``static`` is what it was started with."""
    described = []
    for name, definition in (BROKER_CONFIGS | IDENTITY_CONFIGS).items():
        candidates = _broker_candidates(image, broker_id, static, name)
        if not candidates:
            continue
        winner = candidates[0]
        described.append(
            DescribedConfig(name, winner.value, winner.source, tuple(candidates), definition)
        )
    return described


def describe_cluster_defaults(image: MetadataImage) -> list[DescribedConfig]:
    """The broker resource named "": only what is set live for every broker (Kafka)."""
    return [
        DescribedConfig(
            name,
            value,
            ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
            (Synonym(name, value, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG),),
            BROKER_CONFIGS[name],
        )
        for name, value in sorted(image.broker_configs.get("", {}).items())
        if name in BROKER_CONFIGS
    ]


def describe_topic(
    image: MetadataImage, topic: str, broker_id: int, static: Mapping[str, str]
) -> list[DescribedConfig]:
    """Every topic setting of ``topic``, with the value the brokers apply."""
    described = []
    overrides = image.topic_configs.get(topic, {})
    for name, definition in TOPIC_CONFIGS.items():
        value, where = image.topic_config_source(topic, name)
        candidates = []
        if name in overrides:
            candidates.append(Synonym(name, overrides[name], ConfigSource.DYNAMIC_TOPIC_CONFIG))
        synonym = definition.broker_synonym
        if synonym is not None and synonym in BROKER_CONFIGS:
            candidates.extend(_broker_candidates(image, broker_id, static, synonym))
        else:
            candidates.append(Synonym(name, definition.default, ConfigSource.DEFAULT_CONFIG))
        source = {
            "topic": ConfigSource.DYNAMIC_TOPIC_CONFIG,
            "broker": ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
            "default": ConfigSource.DEFAULT_CONFIG,
        }[where]
        described.append(DescribedConfig(name, value, source, tuple(candidates), definition))
    return described


def describe_group(image: MetadataImage, group: str) -> list[DescribedConfig]:
    """Every group setting of ``group``: its own value, else the default."""
    overrides = image.group_configs.get(group, {})
    described = []
    for name, definition in GROUP_CONFIGS.items():
        synonym = definition.broker_synonym
        default = (
            Synonym(synonym, image.broker_config(synonym), ConfigSource.DEFAULT_CONFIG)
            if synonym is not None
            else Synonym(name, definition.default, ConfigSource.DEFAULT_CONFIG)
        )
        if name in overrides:
            own = Synonym(name, overrides[name], ConfigSource.GROUP_CONFIG)
            described.append(
                DescribedConfig(name, own.value, own.source, (own, default), definition)
            )
        else:
            described.append(
                DescribedConfig(name, default.value, default.source, (default,), definition)
            )
    return described
