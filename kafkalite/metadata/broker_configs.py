"""The settings of a broker Kafka-Lite applies, under Kafka's names, with Kafka's default
beside ours (``config_defs`` has every setting; this module the broker's own).

Most are dynamic, cluster-wide defaults (IncrementalAlterConfigs on the broker resource
``""``) that brokers read when they use them; the read-only ones are taken at start-up
only (``--config k=v``).
"""

from __future__ import annotations

from kafkalite.metadata.config_def import ConfigDef, ConfigType
from kafkalite.metadata.topic_configs import COMPRESSION_TYPES

_B, _I, _L, _S = ConfigType.BOOLEAN, ConfigType.INT, ConfigType.LONG, ConfigType.STRING

IDENTITY_CONFIG_NAMES = frozenset(
    {"node.id", "broker.id", "process.roles", "listeners", "log.dirs"}
)
"""Who a broker is: fixed by how it was started (``--id``, ``--port``, ``--data-dir``), and
reported by DescribeConfigs from there (``config_sources.IDENTITY_CONFIGS``)."""
_D = ConfigType.DOUBLE

APPLIED_BROKER_CONFIGS: dict[str, ConfigDef] = {
    d.name: d
    for d in (
        ConfigDef(
            "log.cleanup.policy",
            ConfigType.LIST,
            "delete",
            "delete",
            "default cleanup.policy",
            choices=("delete", "compact"),
        ),
        ConfigDef("log.cleaner.enable", _B, "true", "true", "run the log cleaner"),
        ConfigDef(
            "log.cleaner.backoff.ms",
            _L,
            "1000",
            "15000",
            "how long the log cleaner sleeps when no log needs cleaning",
            minimum=1,
        ),
        ConfigDef(
            "log.cleaner.delete.retention.ms",
            _L,
            "86400000",
            "86400000",
            "default delete.retention.ms",
            minimum=0,
        ),
        ConfigDef(
            "log.cleaner.min.cleanable.ratio", _D, "0.5", "0.5", "default min.cleanable.dirty.ratio"
        ),
        ConfigDef(
            "log.cleaner.min.compaction.lag.ms",
            _L,
            "0",
            "0",
            "default min.compaction.lag.ms",
            minimum=0,
        ),
        ConfigDef(
            "log.cleaner.max.compaction.lag.ms",
            _L,
            "9223372036854775807",
            "9223372036854775807",
            "default max.compaction.lag.ms",
            minimum=1,
        ),
        ConfigDef("min.insync.replicas", _I, "1", "1", "default min.insync.replicas", minimum=1),
        ConfigDef(
            "log.retention.ms", _L, "604800000", "604800000", "default retention.ms", minimum=-1
        ),
        ConfigDef("log.retention.bytes", _L, "-1", "-1", "default retention.bytes", minimum=-1),
        ConfigDef(
            "log.segment.bytes", _I, "1048576", "1073741824", "default segment.bytes", minimum=14
        ),
        ConfigDef("log.roll.ms", _L, "604800000", "604800000", "default segment.ms", minimum=1),
        ConfigDef(
            "log.index.interval.bytes",
            _I,
            "4096",
            "4096",
            "default index.interval.bytes",
            minimum=0,
        ),
        ConfigDef(
            "log.message.timestamp.type",
            _S,
            "CreateTime",
            "CreateTime",
            "default message.timestamp.type",
            choices=("CreateTime", "LogAppendTime"),
        ),
        ConfigDef(
            "log.flush.offset.checkpoint.interval.ms",
            _I,
            "1000",
            "60000",
            "how often each log's recovery point is written (what a crash re-validates)",
            minimum=1,
        ),
        ConfigDef(
            "log.retention.check.interval.ms",
            _L,
            "5000",
            "300000",
            "how often retention runs",
            minimum=1,
        ),
        ConfigDef(
            "unclean.leader.election.enable",
            _B,
            "false",
            "false",
            "default unclean.leader.election.enable",
        ),
        ConfigDef(
            "compression.type",
            _S,
            "producer",
            "producer",
            "default compression.type",
            choices=COMPRESSION_TYPES,
        ),
        ConfigDef(
            "message.max.bytes", _I, "1048588", "1048588", "default max.message.bytes", minimum=0
        ),
        ConfigDef(
            "socket.request.max.bytes",
            _I,
            "104857600",
            "104857600",
            "largest request frame; a bigger one closes the connection",
            minimum=1,
            read_only=True,
        ),
        ConfigDef(
            "advertised.listeners",
            _S,
            "",
            "",
            "PLAINTEXT://host:port that clients are told to use (a proxy, a container name); "
            "empty means the listener's own address",
            read_only=True,
        ),
        ConfigDef(
            "broker.rack",
            _S,
            "",
            "",
            "the rack (or zone) of this broker, reported in Metadata and DescribeCluster",
            read_only=True,
        ),
        ConfigDef(
            "auto.create.topics.enable",
            _B,
            "true",
            "true",
            "create a topic on first Metadata request for it",
        ),
        ConfigDef("num.partitions", _I, "1", "1", "partitions of an auto-created topic", minimum=1),
        ConfigDef(
            "default.replication.factor",
            _I,
            "1",
            "1",
            "replication factor of an auto-created topic",
            minimum=1,
        ),
        ConfigDef(
            "offsets.topic.num.partitions",
            _I,
            "1",
            "50",
            "partitions of __consumer_offsets",
            minimum=1,
            read_only=True,
        ),
        ConfigDef(
            "offsets.topic.segment.bytes",
            _I,
            "1048576",
            "104857600",
            "segment.bytes __consumer_offsets is created with (the cleaner compacts closed ones)",
            minimum=14,
        ),
        ConfigDef(
            "transaction.state.log.segment.bytes",
            _I,
            "1048576",
            "104857600",
            "segment.bytes __transaction_state is created with",
            minimum=14,
        ),
        ConfigDef(
            "offsets.topic.replication.factor",
            ConfigType.SHORT,
            "3",
            "3",
            "replication factor of __consumer_offsets (at most the number of brokers)",
            minimum=1,
            read_only=True,
        ),
        ConfigDef(
            "group.initial.rebalance.delay.ms",
            _I,
            "0",
            "3000",
            "wait for more members before the first rebalance of an empty group",
            minimum=0,
        ),
        ConfigDef(
            "group.min.session.timeout.ms",
            _I,
            "1000",
            "6000",
            "smallest session.timeout.ms a consumer may ask for",
            minimum=0,
        ),
        ConfigDef(
            "group.max.session.timeout.ms",
            _I,
            "1800000",
            "1800000",
            "largest session.timeout.ms a consumer may ask for",
            minimum=0,
        ),
        ConfigDef(
            "group.consumer.session.timeout.ms",
            _I,
            "10000",
            "45000",
            "a member of a consumer group (KIP-848) not heard from for this long is fenced "
            "(a group's consumer.session.timeout.ms overrides it)",
            minimum=1,
        ),
        ConfigDef(
            "group.consumer.heartbeat.interval.ms",
            _I,
            "1000",
            "5000",
            "how often a member of a consumer group (KIP-848) is told to heartbeat: each "
            "step of an incremental rebalance waits for a heartbeat (a group's "
            "consumer.heartbeat.interval.ms overrides it)",
            minimum=1,
        ),
        ConfigDef(
            "group.consumer.assignors",
            ConfigType.LIST,
            "uniform,range",
            "uniform,range",
            "server-side assignors consumer groups (KIP-848) may use, the first by default",
            choices=("uniform", "range"),
        ),
        ConfigDef(
            "group.consumer.migration.policy",
            _S,
            "bidirectional",
            "bidirectional",
            "may a classic group with members become a consumer group when a member of the "
            "consumer protocol joins (upgrade), and back when its last one leaves "
            "(downgrade)? disabled, upgrade, downgrade or bidirectional",
            choices=("disabled", "upgrade", "downgrade", "bidirectional"),
            read_only=True,
        ),
        ConfigDef(
            "group.consumer.max.size",
            _I,
            "2147483647",
            "2147483647",
            "most members a consumer group (KIP-848) may have",
            minimum=1,
        ),
        ConfigDef(
            "offsets.retention.minutes",
            _I,
            "10080",
            "10080",
            "how long committed offsets of an empty group are kept",
            minimum=1,
        ),
        ConfigDef(
            "transaction.state.log.num.partitions",
            _I,
            "1",
            "50",
            "partitions of __transaction_state",
            minimum=1,
            read_only=True,
        ),
        ConfigDef(
            "transaction.state.log.replication.factor",
            ConfigType.SHORT,
            "3",
            "3",
            "replication factor of __transaction_state (at most the number of brokers)",
            minimum=1,
            read_only=True,
        ),
        ConfigDef(
            "transaction.state.log.min.isr",
            _I,
            "2",
            "2",
            "min.insync.replicas of __transaction_state (at most its replication factor)",
            minimum=1,
            read_only=True,
        ),
        ConfigDef(
            "transaction.partition.verification.enable",
            _B,
            "true",
            "true",
            "a partition leader verifies a transactional batch that would open its transaction "
            "with the transaction coordinator before appending it (KIP-890)",
        ),
        ConfigDef(
            "add.partitions.to.txn.retry.backoff.ms",
            _I,
            "20",
            "20",
            "a leader adding a partition to a transaction of version 2 retries this often "
            "while the producer's previous transaction is still ending",
            minimum=0,
            read_only=True,
        ),
        ConfigDef(
            "add.partitions.to.txn.retry.backoff.max.ms",
            _I,
            "100",
            "100",
            "... and for this long before it answers CONCURRENT_TRANSACTIONS",
            minimum=0,
            read_only=True,
        ),
        ConfigDef(
            "transaction.max.timeout.ms",
            _I,
            "900000",
            "900000",
            "largest transaction.timeout.ms a producer may ask for",
            minimum=1,
        ),
        ConfigDef(
            "transaction.abort.timed.out.transaction.cleanup.interval.ms",
            _I,
            "1000",
            "10000",
            "how often the coordinator looks for transactions past their timeout",
            minimum=1,
        ),
        ConfigDef(
            "controller.quorum.voters",
            ConfigType.LIST,
            "",
            "",
            "the metadata quorum, id@host:port of each voter's controller listener "
            "(the supervisor sets it; empty: this broker alone)",
            read_only=True,
        ),
        ConfigDef(
            "replica.fetch.endpoints",
            _S,
            "",
            "",
            "lab only: id@host:port where this broker reaches each leader for replication "
            "(the fault layer's link proxies); empty: the leader's registered address",
            read_only=True,
        ),
        ConfigDef(
            "metadata.log.max.record.bytes.between.snapshots",
            _L,
            "65536",
            "20971520",
            "after this many bytes of metadata records, snapshot the metadata image and drop "
            "the log before it (a voter that falls further behind gets the snapshot)",
            minimum=1024,
            read_only=True,
        ),
        ConfigDef(
            "controller.listener.port",
            _I,
            "0",
            "9093",
            "port of this broker's controller listener (quorum and controller RPCs)",
            minimum=0,
            read_only=True,
        ),
        ConfigDef(
            "controller.quorum.election.timeout.ms",
            _I,
            "300",
            "1000",
            "a voter without a leader stands after a random time in [t, 2t)",
            minimum=10,
            read_only=True,
        ),
        ConfigDef(
            "controller.quorum.fetch.timeout.ms",
            _I,
            "750",
            "2000",
            "a follower that has not heard from its leader for this long stands for election",
            minimum=10,
            read_only=True,
        ),
        ConfigDef(
            "broker.heartbeat.interval.ms",
            _I,
            "400",
            "2000",
            "how often a broker heartbeats to the active controller (its quorum Fetch proves "
            "it alive too)",
            minimum=10,
        ),
        ConfigDef(
            "broker.session.timeout.ms",
            _I,
            "3000",
            "9000",
            "the controller fences a broker it has not heard from for this long (heartbeat or "
            "quorum request); one whose process died is fenced at once, when its connection "
            "to the controller closes",
            minimum=10,
        ),
        ConfigDef(
            "replica.lag.time.max.ms",
            _L,
            "1000",
            "30000",
            "a follower that has not caught up for this long leaves the ISR",
            minimum=1,
        ),
        ConfigDef(
            "replica.fetch.wait.max.ms",
            _I,
            "10000",
            "500",
            "how long a leader may hold a follower's Fetch that finds nothing new (answered at "
            "once when records, a high watermark move or a leader change come)",
            minimum=0,
        ),
        ConfigDef(
            "request.timeout.ms",
            _I,
            "30000",
            "30000",
            "how long a follower waits for its leader's answer (beyond the time the leader may "
            "hold a Fetch) before it drops the connection and asks again on a new one",
            minimum=1,
            read_only=True,
        ),
        ConfigDef(
            "replica.fetch.backoff.ms",
            _I,
            "50",
            "1000",
            "pause after a follower's Fetch fails",
            minimum=0,
        ),
        ConfigDef(
            "leader.imbalance.check.interval.seconds",
            _L,
            "5",
            "300",
            "how often the controller moves leadership back to preferred replicas",
            minimum=1,
        ),
        ConfigDef(
            "auto.leader.rebalance.enable",
            _B,
            "true",
            "true",
            "move leadership back to each partition's preferred (first) replica",
        ),
        ConfigDef(
            "producer.id.expiration.ms",
            _I,
            "86400000",
            "86400000",
            "idle time after which a producer's dedup state is dropped",
            minimum=1,
        ),
    )
}
