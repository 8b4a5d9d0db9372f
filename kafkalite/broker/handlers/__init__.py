"""One module per API family, each a class whose constructor names what its handlers need.

``handler_tables`` builds the two listeners' tables from instances of these classes;
``kafkalite.broker.apis`` is where one broker's instances are made.
"""

from kafkalite.broker.handlers.acls import AclApis
from kafkalite.broker.handlers.api_versions import ApiVersionsApi
from kafkalite.broker.handlers.cluster import ClusterApi
from kafkalite.broker.handlers.configs import ConfigApis
from kafkalite.broker.handlers.consumer_groups import ConsumerGroupApis
from kafkalite.broker.handlers.controller_apis import ControllerApis
from kafkalite.broker.handlers.fetch import FetchApi
from kafkalite.broker.handlers.groups import GroupApis
from kafkalite.broker.handlers.leader_epoch import LeaderEpochApi
from kafkalite.broker.handlers.list_offsets import ListOffsetsApi
from kafkalite.broker.handlers.log_dirs import LogDirApis
from kafkalite.broker.handlers.metadata import MetadataApi
from kafkalite.broker.handlers.offsets import OffsetApis
from kafkalite.broker.handlers.produce import ProduceApi
from kafkalite.broker.handlers.producers import ProducerApis
from kafkalite.broker.handlers.quorum import QuorumApis
from kafkalite.broker.handlers.reassignments import ReassignmentApis
from kafkalite.broker.handlers.records import DeleteRecordsApi
from kafkalite.broker.handlers.registry import ApiSpec, HandlerTable, Listener, api_specs
from kafkalite.broker.handlers.topic_partitions import TopicPartitionsApi
from kafkalite.broker.handlers.topics import TopicApis
from kafkalite.broker.handlers.transactions import TransactionApis
from kafkalite.broker.handlers.txn_offset_commit import TxnOffsetCommitApi
from kafkalite.broker.handlers.write_txn_markers import WriteTxnMarkersApi

API_FAMILIES: tuple[type, ...] = (
    AclApis,
    ApiVersionsApi,
    ClusterApi,
    ConfigApis,
    ConsumerGroupApis,
    ControllerApis,
    DeleteRecordsApi,
    FetchApi,
    GroupApis,
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


__all__ = [
    "API_FAMILIES",
    "AclApis",
    "ApiVersionsApi",
    "ClusterApi",
    "ConfigApis",
    "ConsumerGroupApis",
    "ControllerApis",
    "DeleteRecordsApi",
    "FetchApi",
    "GroupApis",
    "HandlerTable",
    "LeaderEpochApi",
    "ListOffsetsApi",
    "LogDirApis",
    "MetadataApi",
    "OffsetApis",
    "ProduceApi",
    "ProducerApis",
    "QuorumApis",
    "ReassignmentApis",
    "TopicApis",
    "TopicPartitionsApi",
    "TransactionApis",
    "TxnOffsetCommitApi",
    "WriteTxnMarkersApi",
    "handler_tables",
    "served_apis",
]
