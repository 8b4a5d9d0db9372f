"""One broker's request handlers, wired to the components they use.

Each handler class (``broker.handlers``) names its dependencies in its constructor; this
is the one place that hands them over, so which handler may touch what is read here and
in the constructors, not discovered inside the handlers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkalite.broker.cluster_identity import ClusterIdentity
from kafkalite.broker.handlers import (
    AclApis,
    ClusterApi,
    ConfigApis,
    ControllerApis,
    DeleteRecordsApi,
    FetchApi,
    GroupApis,
    HandlerTable,
    LeaderEpochApi,
    ListOffsetsApi,
    LogDirApis,
    MetadataApi,
    OffsetApis,
    ProduceApi,
    ProducerApis,
    QuorumApis,
    ReassignmentApis,
    TopicApis,
    TopicPartitionsApi,
    TransactionApis,
    TxnOffsetCommitApi,
    WriteTxnMarkersApi,
    handler_tables,
)

if TYPE_CHECKING:
    from kafkalite.broker.broker import Broker, BrokerConfig


def static_configs(config: BrokerConfig) -> dict[str, str]:
    """What this broker was started with: its ``--config`` settings and its identity
    (DescribeConfigs reports them as static)."""
    identity = {
        "node.id": str(config.broker_id),
        "broker.id": str(config.broker_id),
        "process.roles": "broker,controller",
        "listeners": f"PLAINTEXT://{config.host}:{config.port}",
        "log.dirs": str(config.data_dir / "logs"),
    }
    return {**config.overrides, **identity}


def broker_handlers(broker: Broker) -> tuple[HandlerTable, HandlerTable]:
    """The client and controller listeners' handler tables of ``broker``."""
    image = broker.image
    replicas = broker.replica_manager
    controller = broker.controller
    groups = broker.group_coordinator
    transactions = broker.txn_coordinator
    emit = broker.events.emit
    now_ms = broker.now_ms
    cluster = ClusterIdentity(
        broker.cluster_id, broker.broker_id, image, lambda: broker.quorum.view
    )
    return handler_tables(
        [
            AclApis(),
            ClusterApi(cluster),
            ConfigApis(broker.broker_id, image, static_configs(broker.config), controller),
            ControllerApis(controller.service),
            DeleteRecordsApi(replicas),
            FetchApi(replicas, image),
            GroupApis(groups, image, broker.group_offsets, broker.txn_state_topic),
            LeaderEpochApi(replicas),
            ListOffsetsApi(replicas),
            LogDirApis(replicas, broker.config.data_dir / "logs"),
            MetadataApi(cluster, controller),
            OffsetApis(groups, image, emit, now_ms),
            ProduceApi(replicas),
            ProducerApis(transactions, broker.producer_ids.next_id, replicas, emit),
            QuorumApis(broker.quorum, broker.voters),
            ReassignmentApis(controller, image),
            TopicApis(controller, image),
            TopicPartitionsApi(image),
            TransactionApis(transactions, image, broker.group_offsets, now_ms),
            TxnOffsetCommitApi(groups, now_ms),
            WriteTxnMarkersApi(replicas, groups, now_ms),
        ]
    )
