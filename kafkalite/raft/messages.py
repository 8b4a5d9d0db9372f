"""The KRaft RPCs as plain dataclasses, one per request/response, with Kafka's field names.

The quorum is a single partition (``__cluster_metadata``-0), so the topic/partition nesting
of the wire schemas is flattened away here; the broker adds it back when it encodes with
kio. Field-by-field mapping (kio 0.6.5 module → here):

- ``vote`` v0: ``replica_epoch``/``replica_id`` were called ``candidate_epoch``/
  ``candidate_id`` in Kafka's schema before v2 (and here); ``last_offset_epoch``,
  ``last_offset``. Response: ``leader_id``, ``leader_epoch``, ``vote_granted``.
- ``begin_quorum_epoch`` / ``end_quorum_epoch``: ``leader_id``, ``leader_epoch``;
  ``preferred_successors`` (v0; ``preferred_candidates`` in v1).
- ``fetch`` v13+: ``replica_id`` (``replica_state.replica_id`` from v15),
  ``current_leader_epoch``, ``fetch_offset``, ``last_fetched_epoch``, ``log_start_offset``,
  ``max_wait_ms``. Response: ``high_watermark``, ``log_start_offset``, ``diverging_epoch``
  {epoch, end_offset}, ``current_leader`` {leader_id, leader_epoch} (flattened),
  ``snapshot_id`` {end_offset, epoch}, ``records`` (entries here, a record batch on the wire).
- ``fetch_snapshot``: ``replica_id``, ``current_leader_epoch``, ``snapshot_id``,
  ``position``, ``max_bytes``; response ``snapshot_id``, ``size``, ``position``,
  ``unaligned_records`` (the chunk), ``current_leader``.

``Envelope.correlation_id`` is the request header's correlation id: a response carries
its request's id, so a node can drop a late or duplicated response.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafkalite.raft.log import Entry
from kafkalite.raft.snapshot import OffsetAndEpoch

NONE = 0
NOT_LEADER_OR_FOLLOWER = 6
FENCED_LEADER_EPOCH = 74
UNKNOWN_LEADER_EPOCH = 75
SNAPSHOT_NOT_FOUND = 98
POSITION_OUT_OF_RANGE = 99
"""Kafka's error codes used by the quorum (``kio.schema.errors.ErrorCode``)."""


@dataclass(frozen=True, slots=True)
class EpochEndOffset:
    """``diverging_epoch``: the leader's log has ``epoch`` ending at ``end_offset``."""

    epoch: int
    end_offset: int


@dataclass(frozen=True, slots=True)
class VoteRequest:
    candidate_epoch: int
    candidate_id: int
    last_offset_epoch: int
    last_offset: int
    pre_vote: bool = False


@dataclass(frozen=True, slots=True)
class VoteResponse:
    error_code: int
    leader_id: int
    leader_epoch: int
    vote_granted: bool


@dataclass(frozen=True, slots=True)
class BeginQuorumEpochRequest:
    leader_id: int
    leader_epoch: int


@dataclass(frozen=True, slots=True)
class BeginQuorumEpochResponse:
    error_code: int
    leader_id: int
    leader_epoch: int


@dataclass(frozen=True, slots=True)
class EndQuorumEpochRequest:
    leader_id: int
    leader_epoch: int
    preferred_successors: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class EndQuorumEpochResponse:
    error_code: int
    leader_id: int
    leader_epoch: int


@dataclass(frozen=True, slots=True)
class FetchRequest:
    replica_id: int
    current_leader_epoch: int
    fetch_offset: int
    last_fetched_epoch: int
    log_start_offset: int = 0
    max_wait_ms: int = 0


@dataclass(frozen=True, slots=True)
class FetchResponse:
    error_code: int
    leader_id: int
    leader_epoch: int
    high_watermark: int = -1
    log_start_offset: int = 0
    diverging_epoch: EpochEndOffset | None = None
    snapshot_id: OffsetAndEpoch | None = None
    records: tuple[Entry, ...] = ()


@dataclass(frozen=True, slots=True)
class FetchSnapshotRequest:
    replica_id: int
    current_leader_epoch: int
    snapshot_id: OffsetAndEpoch
    position: int
    max_bytes: int


@dataclass(frozen=True, slots=True)
class FetchSnapshotResponse:
    error_code: int
    leader_id: int
    leader_epoch: int
    snapshot_id: OffsetAndEpoch
    size: int = 0
    position: int = 0
    unaligned_records: bytes = b""


Request = (
    VoteRequest
    | BeginQuorumEpochRequest
    | EndQuorumEpochRequest
    | FetchRequest
    | FetchSnapshotRequest
)
Response = (
    VoteResponse
    | BeginQuorumEpochResponse
    | EndQuorumEpochResponse
    | FetchResponse
    | FetchSnapshotResponse
)
Message = Request | Response


@dataclass(frozen=True, slots=True)
class Envelope:
    """One message between voters: what ``poll``/``handle`` return and ``handle`` accepts."""

    source: int
    destination: int
    correlation_id: int
    message: Message = field(compare=True)

    @property
    def is_request(self) -> bool:
        return isinstance(self.message, Request)


Outbound = Envelope
Inbound = Envelope
