"""One broker's request handlers, wired to the components they use.

Each handler class (``broker.handlers``) names its dependencies in its constructor; this
is the one place that hands them over, so which handler may touch what is read here and
in the constructors, not discovered inside the handlers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkalite.broker import handlers as h
from kafkalite.broker.cluster_identity import ClusterIdentity
from kafkalite.broker.transaction_verification import TransactionVerifier

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


def broker_handlers(broker: Broker) -> tuple[h.HandlerTable, h.HandlerTable]:
    """The client and controller listeners' handler tables of ``broker``."""
    image = broker.image
    replicas = broker.replica_manager
    controller = broker.controller
    groups = broker.group_coordinator
    transactions = broker.txn_coordinator
    emit = broker.events.emit
    now_ms = broker.now_ms
    verifier = TransactionVerifier(
        broker.broker_id,
        image,
        transactions,
        broker.txn_state_topic,
        broker.txn_markers,
        # cluster-wide in Kafka: every broker's default, or set for one broker
        lambda: (
            image.broker_config(
                "transaction.partition.verification.enable", broker.broker_id
            ).lower()
            == "true"
        ),
    )
    cluster = ClusterIdentity(
        broker.cluster_id, broker.broker_id, image, lambda: broker.quorum.view
    )
    return h.handler_tables(
        [
            h.AclApis(),
            h.ClusterApi(cluster),
            h.ConfigApis(broker.broker_id, image, static_configs(broker.config), controller),
            h.ConsumerGroupApis(groups),
            h.ControllerApis(controller.service),
            h.DeleteRecordsApi(replicas),
            h.FetchApi(replicas, image),
            h.GroupApis(groups, image, broker.group_offsets, broker.txn_state_topic),
            h.LeaderEpochApi(replicas),
            h.ListOffsetsApi(replicas),
            h.LogDirApis(replicas, broker.config.data_dir / "logs"),
            h.MetadataApi(cluster, controller),
            h.OffsetApis(groups, image, emit, now_ms),
            h.ProduceApi(replicas, image, verifier),
            h.ProducerApis(transactions, broker.producer_ids.next_id, replicas, emit),
            h.QuorumApis(broker.quorum, broker.voters, controller.service.watch_connection),
            h.ReassignmentApis(controller, image),
            h.TopicApis(controller, image),
            h.TopicPartitionsApi(image),
            h.TransactionApis(transactions, image, broker.group_offsets, now_ms),
            h.TxnOffsetCommitApi(groups, replicas, verifier, image, now_ms),
            h.WriteTxnMarkersApi(replicas, groups, now_ms, verifier.guards),
        ]
    )
