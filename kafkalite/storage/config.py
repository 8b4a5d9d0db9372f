"""The settings one partition log obeys, parsed from Kafka-named topic configs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kafkalite.metadata.config_defs import TOPIC_CONFIGS, validate_topic_configs
from kafkalite.protocol.compression import CODEC_BY_NAME, Codec


@dataclass(frozen=True, slots=True)
class LogConfig:
    segment_bytes: int = int(TOPIC_CONFIGS["segment.bytes"].default)
    segment_ms: int = int(TOPIC_CONFIGS["segment.ms"].default)
    retention_bytes: int = int(TOPIC_CONFIGS["retention.bytes"].default)
    retention_ms: int = int(TOPIC_CONFIGS["retention.ms"].default)
    index_interval_bytes: int = int(TOPIC_CONFIGS["index.interval.bytes"].default)
    max_message_bytes: int = int(TOPIC_CONFIGS["max.message.bytes"].default)
    cleanup_policy: str = TOPIC_CONFIGS["cleanup.policy"].default
    delete_retention_ms: int = int(TOPIC_CONFIGS["delete.retention.ms"].default)
    min_cleanable_dirty_ratio: float = float(TOPIC_CONFIGS["min.cleanable.dirty.ratio"].default)
    min_compaction_lag_ms: int = int(TOPIC_CONFIGS["min.compaction.lag.ms"].default)
    max_compaction_lag_ms: int = int(TOPIC_CONFIGS["max.compaction.lag.ms"].default)
    log_append_time: bool = False
    compression: Codec | None = None  # None: keep the producer's codec ("producer")

    @property
    def compact(self) -> bool:
        """``cleanup.policy`` includes ``compact`` (alone or as ``compact,delete``)."""
        return "compact" in [p.strip() for p in self.cleanup_policy.split(",")]

    @property
    def delete(self) -> bool:
        """``cleanup.policy`` includes ``delete``: retention deletes old segments."""
        return "delete" in [p.strip() for p in self.cleanup_policy.split(",")]

    @classmethod
    def from_configs(cls, configs: Mapping[str, str]) -> LogConfig:
        """Raises ``InvalidConfigError`` for a value Kafka would reject."""
        relevant = {k: v for k, v in configs.items() if k in TOPIC_CONFIGS}
        validate_topic_configs(relevant)
        base = cls()

        def number(name: str, default: int) -> int:
            return int(relevant[name]) if name in relevant else default

        return cls(
            segment_bytes=number("segment.bytes", base.segment_bytes),
            segment_ms=number("segment.ms", base.segment_ms),
            retention_bytes=number("retention.bytes", base.retention_bytes),
            retention_ms=number("retention.ms", base.retention_ms),
            index_interval_bytes=number("index.interval.bytes", base.index_interval_bytes),
            max_message_bytes=number("max.message.bytes", base.max_message_bytes),
            cleanup_policy=relevant.get("cleanup.policy", base.cleanup_policy),
            delete_retention_ms=number("delete.retention.ms", base.delete_retention_ms),
            min_cleanable_dirty_ratio=float(
                relevant.get("min.cleanable.dirty.ratio", base.min_cleanable_dirty_ratio)
            ),
            min_compaction_lag_ms=number("min.compaction.lag.ms", base.min_compaction_lag_ms),
            max_compaction_lag_ms=number("max.compaction.lag.ms", base.max_compaction_lag_ms),
            log_append_time=relevant.get("message.timestamp.type") == "LogAppendTime",
            compression=CODEC_BY_NAME.get(relevant.get("compression.type", "producer")),
        )
