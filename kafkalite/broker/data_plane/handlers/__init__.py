"""The data plane's request handlers: one module per API family, each a class whose
constructor names what its handlers need. They run on the broker's main loop (forwarded
admin requests arriving on the controller listener are handed to it too).

``kafkalite.broker.apis`` makes one broker's instances and builds the listeners' tables.
"""

from kafkalite.broker.data_plane.handlers.acls import AclApis
from kafkalite.broker.data_plane.handlers.cluster import ClusterApi
from kafkalite.broker.data_plane.handlers.configs import ConfigApis
from kafkalite.broker.data_plane.handlers.consumer_groups import ConsumerGroupApis
from kafkalite.broker.data_plane.handlers.fetch import FetchApi
from kafkalite.broker.data_plane.handlers.groups import GroupApis
from kafkalite.broker.data_plane.handlers.leader_epoch import LeaderEpochApi
from kafkalite.broker.data_plane.handlers.list_offsets import ListOffsetsApi
from kafkalite.broker.data_plane.handlers.log_dirs import LogDirApis
from kafkalite.broker.data_plane.handlers.metadata import MetadataApi
from kafkalite.broker.data_plane.handlers.offsets import OffsetApis
from kafkalite.broker.data_plane.handlers.produce import ProduceApi
from kafkalite.broker.data_plane.handlers.producers import ProducerApis
from kafkalite.broker.data_plane.handlers.reassignments import ReassignmentApis
from kafkalite.broker.data_plane.handlers.records import DeleteRecordsApi
from kafkalite.broker.data_plane.handlers.topic_partitions import TopicPartitionsApi
from kafkalite.broker.data_plane.handlers.topics import TopicApis
from kafkalite.broker.data_plane.handlers.transactions import TransactionApis
from kafkalite.broker.data_plane.handlers.txn_offset_commit import TxnOffsetCommitApi
from kafkalite.broker.data_plane.handlers.write_txn_markers import WriteTxnMarkersApi

__all__ = [
    "AclApis",
    "ClusterApi",
    "ConfigApis",
    "ConsumerGroupApis",
    "DeleteRecordsApi",
    "FetchApi",
    "GroupApis",
    "LeaderEpochApi",
    "ListOffsetsApi",
    "LogDirApis",
    "MetadataApi",
    "OffsetApis",
    "ProduceApi",
    "ProducerApis",
    "ReassignmentApis",
    "TopicApis",
    "TopicPartitionsApi",
    "TransactionApis",
    "TxnOffsetCommitApi",
    "WriteTxnMarkersApi",
]
