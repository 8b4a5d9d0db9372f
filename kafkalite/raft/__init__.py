"""Kafka-Lite's metadata quorum: KRaft's Raft as pure, deterministic state machines.

``RaftNode`` (node.py) is the entry point; roles are in roles.py, the log and its epoch
cache in log.py / file_log.py, durable election state in quorum_state.py, snapshots in
snapshot.py and the KRaft RPCs in messages.py. Nothing here does I/O other than the file
stores; the broker owns sockets and time.
"""

from kafkalite.raft.config import RaftConfig
from kafkalite.raft.file_log import FileRaftLog
from kafkalite.raft.log import Entry, LogInvariantError, MemoryRaftLog, RaftLog
from kafkalite.raft.messages import Envelope, Inbound, Outbound
from kafkalite.raft.node import NotLeader, QuorumInfo, RaftNode
from kafkalite.raft.quorum_state import (
    ElectionState,
    FileQuorumStateStore,
    MemoryQuorumStateStore,
    QuorumStateStore,
)
from kafkalite.raft.roles import Role
from kafkalite.raft.snapshot import (
    FileSnapshotStore,
    MemorySnapshotStore,
    OffsetAndEpoch,
    Snapshot,
    SnapshotStore,
)

__all__ = [
    "ElectionState",
    "Entry",
    "Envelope",
    "FileQuorumStateStore",
    "FileRaftLog",
    "FileSnapshotStore",
    "Inbound",
    "LogInvariantError",
    "MemoryQuorumStateStore",
    "MemoryRaftLog",
    "MemorySnapshotStore",
    "NotLeader",
    "OffsetAndEpoch",
    "Outbound",
    "QuorumInfo",
    "QuorumStateStore",
    "RaftConfig",
    "RaftLog",
    "RaftNode",
    "Role",
    "Snapshot",
    "SnapshotStore",
]
