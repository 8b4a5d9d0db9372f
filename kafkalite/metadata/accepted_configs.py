"""Settings Kafka accepts that Kafka-Lite takes, stores and reports, but does not act on.

Course material, docker-compose files and tools written for Kafka set them (a topic created
with ``message.format.version`` or ``flush.ms``; a broker started with
``num.io.threads``). Kafka-Lite accepts each with Kafka's name, type and default, so that
such a request succeeds as it does against Kafka, and says in DescribeConfigs that it
does not apply it (there is no flush scheduler, no tiered storage, no thread pools).
``message.format.version`` is deprecated and ignored by Kafka 3.x itself. The broker
settings are every one of Kafka 4.0's (``kafka_broker_catalogue``), with Kafka's update
mode: a read-only one is refused at run time, as Kafka refuses it.

A setting defined in ``config_defs`` (one Kafka-Lite does apply) always wins over one here.
"""

from __future__ import annotations

from kafkalite.metadata.broker_configs import IDENTITY_CONFIG_NAMES
from kafkalite.metadata.config_def import ConfigDef, ConfigType, UpdateMode
from kafkalite.metadata.kafka_broker_catalogue import KAFKA_4_0_BROKER_CONFIGS

_B, _I, _L, _S = ConfigType.BOOLEAN, ConfigType.INT, ConfigType.LONG, ConfigType.STRING
_LIST = ConfigType.LIST

# name, type, Kafka's default, what it does in Kafka
_COMPRESSION_LEVELS: tuple[tuple[str, ConfigType, str, str], ...] = (
    ("compression.gzip.level", _I, "-1", "gzip level when the broker compresses (KIP-390)"),
    ("compression.lz4.level", _I, "9", "lz4 level when the broker compresses (KIP-390)"),
    ("compression.zstd.level", _I, "3", "zstd level when the broker compresses (KIP-390)"),
)
_TOPIC: tuple[tuple[str, ConfigType, str, str], ...] = (
    ("file.delete.delay.ms", _L, "60000", "delay before a deleted segment's file is removed"),
    ("flush.messages", _L, "9223372036854775807", "fsync after this many messages"),
    ("flush.ms", _L, "9223372036854775807", "fsync after this many milliseconds"),
    ("follower.replication.throttled.replicas", _LIST, "", "replicas throttled on followers"),
    ("leader.replication.throttled.replicas", _LIST, "", "replicas throttled on leaders"),
    ("local.retention.bytes", _L, "-2", "local size kept with tiered storage"),
    ("local.retention.ms", _L, "-2", "local time kept with tiered storage"),
    ("message.downconversion.enable", _B, "true", "down-convert for old consumers"),
    ("message.format.version", _S, "3.0-IV1", "deprecated; ignored by Kafka 3.x as well"),
    ("message.timestamp.after.max.ms", _L, "9223372036854775807", "allowed future timestamps"),
    ("message.timestamp.before.max.ms", _L, "9223372036854775807", "allowed past timestamps"),
    ("message.timestamp.difference.max.ms", _L, "9223372036854775807", "deprecated bound"),
    ("preallocate", _B, "false", "preallocate segment files"),
    ("remote.storage.enable", _B, "false", "tiered storage for this topic"),
    ("segment.index.bytes", _I, "10485760", "size of a segment's offset index"),
    ("segment.jitter.ms", _L, "0", "random jitter subtracted from segment.ms"),
    ("remote.log.copy.disable", _B, "false", "stop copying to tiered storage"),
    ("remote.log.delete.on.disable", _B, "false", "delete tiered data when turned off"),
    *_COMPRESSION_LEVELS,
)


def _defs(table: tuple[tuple[str, ConfigType, str, str], ...]) -> dict[str, ConfigDef]:
    return {
        name: ConfigDef(name, kind, default, default, f"{doc} (accepted, not applied here)")
        for name, kind, default, doc in table
    }


ACCEPTED_TOPIC_CONFIGS = _defs(_TOPIC)
ACCEPTED_BROKER_CONFIGS = {
    name: ConfigDef(
        name,
        kind,
        default,
        default,
        "a Kafka 4.0 broker setting (accepted, not applied here)",
        read_only=mode is UpdateMode.READ_ONLY,
        update_mode=mode,
    )
    for name, kind, default, mode in KAFKA_4_0_BROKER_CONFIGS
    if name not in IDENTITY_CONFIG_NAMES
}
