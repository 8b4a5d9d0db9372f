"""The settings of a topic Kafka-Lite applies, under Kafka's names, with Kafka's default
beside ours (``config_defs`` has every setting; this module the topic's own).

Each falls back to its broker synonym (``retention.ms`` -> ``log.retention.ms``), so
DescribeConfigs can say where a value comes from.
"""

from __future__ import annotations

from kafkalite.metadata.config_def import ConfigDef, ConfigType

COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")

_B, _I, _L, _S = ConfigType.BOOLEAN, ConfigType.INT, ConfigType.LONG, ConfigType.STRING
_D = ConfigType.DOUBLE

APPLIED_TOPIC_CONFIGS: dict[str, ConfigDef] = {
    d.name: d
    for d in (
        ConfigDef(
            "cleanup.policy",
            ConfigType.LIST,
            "delete",
            "delete",
            "delete old segments, or compact to the latest value per key",
            choices=("delete", "compact"),
            broker_synonym="log.cleanup.policy",
        ),
        ConfigDef(
            "min.insync.replicas",
            _I,
            "1",
            "1",
            "replicas that must be in sync for an acks=all write to be accepted",
            minimum=1,
            broker_synonym="min.insync.replicas",
        ),
        ConfigDef(
            "retention.ms",
            _L,
            "604800000",
            "604800000",
            "age after which a closed segment is deleted (-1: forever)",
            minimum=-1,
            broker_synonym="log.retention.ms",
        ),
        ConfigDef(
            "retention.bytes",
            _L,
            "-1",
            "-1",
            "partition size above which the oldest segments are deleted (-1: no limit)",
            minimum=-1,
            broker_synonym="log.retention.bytes",
        ),
        ConfigDef(
            "segment.bytes",
            _I,
            "1048576",
            "1073741824",
            "a segment rolls when it reaches this size (small in the lab to see rolls)",
            minimum=14,
            broker_synonym="log.segment.bytes",
        ),
        ConfigDef(
            "segment.ms",
            _L,
            "604800000",
            "604800000",
            "a segment rolls when its first batch is this old",
            minimum=1,
            broker_synonym="log.roll.ms",
        ),
        ConfigDef(
            "index.interval.bytes",
            _I,
            "4096",
            "4096",
            "bytes between offset index entries",
            minimum=0,
            broker_synonym="log.index.interval.bytes",
        ),
        ConfigDef(
            "max.message.bytes",
            _I,
            "1048588",
            "1048588",
            "largest record batch the broker accepts",
            minimum=0,
            broker_synonym="message.max.bytes",
        ),
        ConfigDef(
            "message.timestamp.type",
            _S,
            "CreateTime",
            "CreateTime",
            "CreateTime keeps the producer's timestamps; LogAppendTime uses the broker's",
            choices=("CreateTime", "LogAppendTime"),
            broker_synonym="log.message.timestamp.type",
        ),
        ConfigDef(
            "unclean.leader.election.enable",
            _B,
            "false",
            "false",
            "let an out-of-sync replica become leader (availability over durability)",
            broker_synonym="unclean.leader.election.enable",
        ),
        ConfigDef(
            "compression.type",
            _S,
            "producer",
            "producer",
            "'producer' keeps the producer's codec; gzip, snappy, lz4, zstd or uncompressed "
            "make the leader recompress each batch that arrives in another codec",
            choices=COMPRESSION_TYPES,
            broker_synonym="compression.type",
        ),
        ConfigDef(
            "delete.retention.ms",
            _L,
            "86400000",
            "86400000",
            "how long the log cleaner keeps a delete tombstone (and a transaction marker) "
            "after the segment holding it was last written",
            minimum=0,
            broker_synonym="log.cleaner.delete.retention.ms",
        ),
        ConfigDef(
            "min.cleanable.dirty.ratio",
            _D,
            "0.5",
            "0.5",
            "share of a compacted log not yet cleaned above which the log cleaner cleans it",
            broker_synonym="log.cleaner.min.cleanable.ratio",
        ),
        ConfigDef(
            "min.compaction.lag.ms",
            _L,
            "0",
            "0",
            "youngest a record may be to be compacted away",
            minimum=0,
            broker_synonym="log.cleaner.min.compaction.lag.ms",
        ),
        ConfigDef(
            "max.compaction.lag.ms",
            _L,
            "9223372036854775807",
            "9223372036854775807",
            "oldest a record may get uncleaned: past it, the log is cleaned at any dirty ratio",
            minimum=1,
            broker_synonym="log.cleaner.max.compaction.lag.ms",
        ),
    )
}
