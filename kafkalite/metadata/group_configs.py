"""The settings of a consumer group (``config_defs`` has every setting; this module the
group's own)."""

from __future__ import annotations

from kafkalite.metadata.config_def import ConfigDef, ConfigType

_I = ConfigType.INT

GROUP_CONFIGS: dict[str, ConfigDef] = {
    d.name: d
    for d in (
        ConfigDef(name, _I, default, default, f"{doc} (accepted, not applied here)", minimum=1)
        for name, default, doc in (
            ("consumer.session.timeout.ms", "45000", "KIP-848 consumer groups' session timeout"),
            ("consumer.heartbeat.interval.ms", "5000", "KIP-848 consumer groups' heartbeat"),
            ("share.session.timeout.ms", "45000", "share groups' session timeout"),
            ("share.heartbeat.interval.ms", "5000", "share groups' heartbeat interval"),
            ("share.record.lock.duration.ms", "30000", "share groups' record lock duration"),
        )
    )
}
"""Settings of one group (IncrementalAlterConfigs on a GROUP resource, Kafka 3.9+). They
belong to the KIP-848 and share-group protocols; the classic protocol Kafka-Lite runs does
not read them, in Kafka either."""
