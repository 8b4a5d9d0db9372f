"""One broker's request handlers, wired to the components they use, and the two
listeners' tables built from them.

Each handler class (the data plane's in ``broker.data_plane.handlers``, the control
plane's ``ControllerApis`` and ``QuorumApis``, and ``ApiVersionsApi`` on both listeners)
names its dependencies in its constructor; this is the one place that hands them over, so
which handler may touch what is read here and in the constructors, not discovered inside
the handlers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkalite.broker.api_versions import ApiVersionsApi
from kafkalite.broker.control_plane.controller_apis import ControllerApis
from kafkalite.broker.control_plane.quorum_apis import QuorumApis
from kafkalite.broker.data_plane import handlers as h
from kafkalite.broker.data_plane.cluster_identity import ClusterIdentity
from kafkalite.broker.data_plane.transaction_verification import TransactionVerifier
from kafkalite.broker.handler_registry import ApiSpec, HandlerTable, Listener, api_specs

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
    return handler_tables(
        [
            h.AclApis(),
            h.ClusterApi(cluster),
            h.ConfigApis(broker.broker_id, image, static_configs(broker.config), controller),
            h.ConsumerGroupApis(groups),
            ControllerApis(controller.service),
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
            QuorumApis(broker.quorum, broker.voters, controller.service.watch_connection),
            h.ReassignmentApis(controller, image),
            h.TopicApis(controller, image),
            h.TopicPartitionsApi(image),
            h.TransactionApis(transactions, image, broker.group_offsets, now_ms),
            h.TxnOffsetCommitApi(groups, replicas, verifier, image, now_ms),
            h.WriteTxnMarkersApi(replicas, groups, now_ms, verifier.guards),
        ]
    )


API_FAMILIES: tuple[type, ...] = (
    h.AclApis,
    ApiVersionsApi,
    h.ClusterApi,
    h.ConfigApis,
    h.ConsumerGroupApis,
    ControllerApis,
    h.DeleteRecordsApi,
    h.FetchApi,
    h.GroupApis,
    h.LeaderEpochApi,
    h.ListOffsetsApi,
    h.LogDirApis,
    h.MetadataApi,
    h.OffsetApis,
    h.ProduceApi,
    h.ProducerApis,
    QuorumApis,
    h.ReassignmentApis,
    h.TopicApis,
    h.TopicPartitionsApi,
    h.TransactionApis,
    h.TxnOffsetCommitApi,
    h.WriteTxnMarkersApi,
)
"""Every handler class: what a broker serves, known without building one."""


def served_apis() -> list[ApiSpec]:
    """Every API and version range either listener serves (forwarded requests included)."""
    return [spec for family in API_FAMILIES for _, spec in api_specs(family)]


def handler_tables(families: list[object]) -> tuple[HandlerTable, HandlerTable]:
    """The client and controller listeners' tables, from one instance of every family
    but ApiVersions (added here: it answers from the client table). Admin requests
    forwarded by other brokers are served on the controller listener by the client
    handlers."""
    client, controller = HandlerTable(), HandlerTable()
    given = {type(family) for family in families}
    missing = set(API_FAMILIES) - given - {ApiVersionsApi}
    if missing or len(given) != len(families):
        raise ValueError(f"one instance of every handler family: missing {missing}")
    for family in [*families, ApiVersionsApi(client)]:
        client.add_apis(Listener.CLIENT, family)
        controller.add_apis(Listener.CONTROLLER, family)
    for handler in client.values():
        if handler.forward and handler.api_key not in controller:
            controller.add(handler)
    return client, controller
