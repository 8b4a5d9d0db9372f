"""The settings of a consumer group (``config_defs`` has every setting; this module the
group's own)."""

from __future__ import annotations

from kafkalite.metadata.config_def import ConfigDef, ConfigType

_I = ConfigType.INT

APPLIED_GROUP_CONFIGS: dict[str, ConfigDef] = {
    d.name: d
    for d in (
        ConfigDef(name, _I, default, kafka, doc, minimum=1, broker_synonym=synonym)
        for name, default, kafka, synonym, doc in (
            (
                "consumer.session.timeout.ms",
                "10000",
                "45000",
                "group.consumer.session.timeout.ms",
                "this consumer group's (KIP-848) session timeout",
            ),
            (
                "consumer.heartbeat.interval.ms",
                "1000",
                "5000",
                "group.consumer.heartbeat.interval.ms",
                "how often this consumer group's (KIP-848) members heartbeat",
            ),
        )
    )
}
GROUP_CONFIGS: dict[str, ConfigDef] = APPLIED_GROUP_CONFIGS | {
    d.name: d
    for d in (
        ConfigDef(name, _I, default, default, f"{doc} (accepted, not applied here)", minimum=1)
        for name, default, doc in (
            ("share.session.timeout.ms", "45000", "share groups' session timeout"),
            ("share.heartbeat.interval.ms", "5000", "share groups' heartbeat interval"),
            ("share.record.lock.duration.ms", "30000", "share groups' record lock duration"),
        )
    )
}
"""Settings of one group (IncrementalAlterConfigs on a GROUP resource, Kafka 3.9+). The
consumer.* ones override, for one KIP-848 consumer group, the broker setting they are named
after (their default); the classic protocol does not read them, in Kafka either. Share
groups (KIP-932) are not served here."""
