"""The quorum's messages on the wire: ``raft.messages`` <-> kio's KRaft RPC schemas.

The Raft core speaks flat dataclasses for the single ``__cluster_metadata``-0 partition;
the wire nests everything under topics and partitions, as Kafka's KRaft does. This module
adds and removes that nesting, and turns log entries into v2 record batches (the entry's
epoch is the batch's ``partitionLeaderEpoch``; quorum records such as LeaderChange travel
in control batches), so a packet capture of the quorum reads like Kafka's own.

Versions used: Vote v2 (with KIP-996's pre-vote), BeginQuorumEpoch v0, EndQuorumEpoch v0,
Fetch v15 (replica state and topic ids), FetchSnapshot v0. No I/O here.
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Sized
from dataclasses import dataclass
from typing import Any

from kio.schema.begin_quorum_epoch.v0 import request as begin_req
from kio.schema.begin_quorum_epoch.v0 import response as begin_res
from kio.schema.end_quorum_epoch.v0 import request as end_req
from kio.schema.end_quorum_epoch.v0 import response as end_res
from kio.schema.fetch.v15 import request as fetch_req
from kio.schema.fetch.v15 import response as fetch_res
from kio.schema.fetch_snapshot.v0 import request as snap_req
from kio.schema.fetch_snapshot.v0 import response as snap_res
from kio.schema.vote.v2 import request as vote_req
from kio.schema.vote.v2 import response as vote_res

from kafkalite.protocol.codec import build, millis
from kafkalite.protocol.fetch_response import NONE, PartitionTags, encode_fetch_response
from kafkalite.protocol.record_batch import iter_batches
from kafkalite.protocol.records import Record, build_batch, decode_records
from kafkalite.raft import messages as m
from kafkalite.raft.log import Entry
from kafkalite.raft.snapshot import OffsetAndEpoch

METADATA_TOPIC = "__cluster_metadata"
METADATA_TOPIC_ID = uuid.UUID(int=1)  # Kafka's fixed id for the metadata topic
PARTITION = 0


def _make(cls: type, **fields: Any) -> Any:
    """kio's generated classes want its phantom int types; ``build`` converts for us."""
    return build(cls, fields)


def entries_to_records(entries: tuple[Entry, ...]) -> bytes:
    """Consecutive entries of one epoch and kind share a batch."""
    batches = []
    for (epoch, control), group in itertools.groupby(entries, lambda e: (e.epoch, e.control)):
        run = list(group)
        batches.append(
            build_batch(
                [Record(None, e.payload, 0) for e in run],
                base_offset=run[0].offset,
                partition_leader_epoch=epoch,
                control=control,
            )
        )
    return b"".join(batches)


def records_to_entries(data: bytes | None) -> tuple[Entry, ...]:
    entries: list[Entry] = []
    for pos, header in iter_batches(data or b""):
        for record in decode_records(data or b"", pos):
            entries.append(
                Entry(
                    record.offset,
                    header.partition_leader_epoch,
                    record.value or b"",
                    header.is_control,
                )
            )
    return tuple(entries)


def _snapshot_id(cls: type, snapshot: OffsetAndEpoch | None) -> Any:
    if snapshot is None:
        return build(cls, {"end_offset": -1, "epoch": -1})
    return build(cls, {"end_offset": snapshot.end_offset, "epoch": snapshot.epoch})


FETCH_VERSION = int(fetch_res.FetchResponse.__version__)


@dataclass(frozen=True, slots=True)
class _FetchedPartition:
    """The metadata partition's answer, as ``encode_fetch_response`` reads it."""

    error: int
    high_watermark: int
    log_start_offset: int
    records: bytes
    last_stable_offset: int = -1
    aborted_transactions: None = None


def fetch_response_frame(message: m.FetchResponse, correlation_id: int) -> list[bytes | Sized]:
    """A quorum Fetch response's whole frame, encoded by hand as client Fetch responses
    are (``protocol.fetch_response``): the same bytes as ``encode`` then kio's writer
    (``tests/unit/raft/test_wire.py`` checks), without building kio's tree of phantom-typed
    objects, which took most of the quorum leader's CPU per Fetch."""
    diverging = message.diverging_epoch
    snapshot = message.snapshot_id
    answer = _FetchedPartition(
        message.error_code,
        message.high_watermark,
        message.log_start_offset,
        entries_to_records(message.records),
    )
    tags = PartitionTags(
        diverging_epoch=NONE if diverging is None else (diverging.epoch, diverging.end_offset),
        current_leader=(message.leader_id, message.leader_epoch),
        snapshot_id=NONE if snapshot is None else (snapshot.end_offset, snapshot.epoch),
    )
    return encode_fetch_response(
        FETCH_VERSION,
        correlation_id,
        [(METADATA_TOPIC, METADATA_TOPIC_ID, [(PARTITION, answer)])],
        partition_tags=tags,
    )


def encode(message: m.Message, cluster_id: str | None) -> Any:
    """The kio entity (request or response) for one quorum message."""
    match message:
        case m.VoteRequest():
            part = _make(
                vote_req.PartitionData,
                partition_index=PARTITION,
                replica_epoch=message.candidate_epoch,
                replica_id=message.candidate_id,
                replica_directory_id=uuid.UUID(int=0),
                voter_directory_id=uuid.UUID(int=0),
                last_offset_epoch=message.last_offset_epoch,
                last_offset=message.last_offset,
                pre_vote=message.pre_vote,
            )
            return _make(
                vote_req.VoteRequest,
                cluster_id=cluster_id,
                voter_id=-1,
                topics=(_make(vote_req.TopicData, topic_name=METADATA_TOPIC, partitions=(part,)),),
            )
        case m.VoteResponse():
            part = build(
                vote_res.PartitionData,
                {
                    "partition_index": PARTITION,
                    "error_code": message.error_code,
                    "leader_id": message.leader_id,
                    "leader_epoch": message.leader_epoch,
                    "vote_granted": message.vote_granted,
                },
            )
            return build(
                vote_res.VoteResponse,
                {
                    "error_code": 0,
                    "topics": (
                        _make(vote_res.TopicData, topic_name=METADATA_TOPIC, partitions=(part,)),
                    ),
                    "node_endpoints": (),
                },
            )
        case m.BeginQuorumEpochRequest():
            part = _make(
                begin_req.PartitionData,
                partition_index=PARTITION,
                leader_id=message.leader_id,
                leader_epoch=message.leader_epoch,
            )
            return _make(
                begin_req.BeginQuorumEpochRequest,
                cluster_id=cluster_id,
                topics=(_make(begin_req.TopicData, topic_name=METADATA_TOPIC, partitions=(part,)),),
            )
        case m.EndQuorumEpochRequest():
            part = _make(
                end_req.PartitionData,
                partition_index=PARTITION,
                leader_id=message.leader_id,
                leader_epoch=message.leader_epoch,
                preferred_successors=message.preferred_successors,
            )
            return _make(
                end_req.EndQuorumEpochRequest,
                cluster_id=cluster_id,
                topics=(_make(end_req.TopicData, topic_name=METADATA_TOPIC, partitions=(part,)),),
            )
        case m.BeginQuorumEpochResponse() | m.EndQuorumEpochResponse():
            module = begin_res if isinstance(message, m.BeginQuorumEpochResponse) else end_res
            part = build(
                module.PartitionData,
                {
                    "partition_index": PARTITION,
                    "error_code": message.error_code,
                    "leader_id": message.leader_id,
                    "leader_epoch": message.leader_epoch,
                },
            )
            response_cls = (
                begin_res.BeginQuorumEpochResponse
                if module is begin_res
                else end_res.EndQuorumEpochResponse
            )
            return build(
                response_cls,
                {
                    "error_code": 0,
                    "topics": (module.TopicData(topic_name=METADATA_TOPIC, partitions=(part,)),),
                },
            )
        case _:
            return _encode_fetches(message, cluster_id)


def _encode_fetches(message: m.Message, cluster_id: str | None) -> Any:
    match message:
        case m.FetchRequest():
            part = _make(
                fetch_req.FetchPartition,
                partition=PARTITION,
                current_leader_epoch=message.current_leader_epoch,
                fetch_offset=message.fetch_offset,
                last_fetched_epoch=message.last_fetched_epoch,
                log_start_offset=message.log_start_offset,
                partition_max_bytes=1 << 20,
            )
            return build(
                fetch_req.FetchRequest,
                {
                    "cluster_id": cluster_id,
                    "replica_state": _make(
                        fetch_req.ReplicaState, replica_id=message.replica_id, replica_epoch=-1
                    ),
                    "max_wait": message.max_wait_ms,
                    "min_bytes": 0,
                    "max_bytes": 1 << 20,
                    "isolation_level": 0,
                    "session_id": 0,
                    "session_epoch": -1,
                    "topics": (
                        _make(fetch_req.FetchTopic, topic_id=METADATA_TOPIC_ID, partitions=(part,)),
                    ),
                    "forgotten_topics_data": (),
                    "rack_id": "",
                },
            )
        case m.FetchResponse():
            diverging = message.diverging_epoch or m.EpochEndOffset(-1, -1)
            part = build(
                fetch_res.PartitionData,
                {
                    "partition_index": PARTITION,
                    "error_code": message.error_code,
                    "high_watermark": message.high_watermark,
                    "last_stable_offset": -1,
                    "log_start_offset": message.log_start_offset,
                    "diverging_epoch": _make(
                        fetch_res.EpochEndOffset,
                        epoch=diverging.epoch,
                        end_offset=diverging.end_offset,
                    ),
                    "current_leader": _make(
                        fetch_res.LeaderIdAndEpoch,
                        leader_id=message.leader_id,
                        leader_epoch=message.leader_epoch,
                    ),
                    "snapshot_id": _snapshot_id(fetch_res.SnapshotId, message.snapshot_id),
                    "aborted_transactions": None,
                    "preferred_read_replica": -1,
                    "records": entries_to_records(message.records),
                },
            )
            return build(
                fetch_res.FetchResponse,
                {
                    "throttle_time": 0,
                    "error_code": 0,
                    "session_id": 0,
                    "responses": (
                        _make(
                            fetch_res.FetchableTopicResponse,
                            topic_id=METADATA_TOPIC_ID,
                            partitions=(part,),
                        ),
                    ),
                },
            )
        case m.FetchSnapshotRequest():
            part = _make(
                snap_req.PartitionSnapshot,
                partition=PARTITION,
                current_leader_epoch=message.current_leader_epoch,
                snapshot_id=_snapshot_id(snap_req.SnapshotId, message.snapshot_id),
                position=message.position,
            )
            return _make(
                snap_req.FetchSnapshotRequest,
                cluster_id=cluster_id,
                replica_id=message.replica_id,
                max_bytes=message.max_bytes,
                topics=(_make(snap_req.TopicSnapshot, name=METADATA_TOPIC, partitions=(part,)),),
            )
        case m.FetchSnapshotResponse():
            part = build(
                snap_res.PartitionSnapshot,
                {
                    "index": PARTITION,
                    "error_code": message.error_code,
                    "snapshot_id": _snapshot_id(snap_res.SnapshotId, message.snapshot_id),
                    "current_leader": _make(
                        snap_res.LeaderIdAndEpoch,
                        leader_id=message.leader_id,
                        leader_epoch=message.leader_epoch,
                    ),
                    "size": message.size,
                    "position": message.position,
                    "unaligned_records": message.unaligned_records,
                },
            )
            return build(
                snap_res.FetchSnapshotResponse,
                {
                    "throttle_time": 0,
                    "error_code": 0,
                    "topics": (
                        _make(snap_res.TopicSnapshot, name=METADATA_TOPIC, partitions=(part,)),
                    ),
                },
            )
    raise TypeError(f"not a quorum message: {message!r}")


def _only_partition(entity: Any) -> Any:
    topics = entity.topics if hasattr(entity, "topics") else entity.responses
    return topics[0].partitions[0]


def decode(entity: Any) -> m.Message:
    """The quorum message a kio entity carries (the single metadata partition)."""
    p = _only_partition(entity)
    match entity:
        case vote_req.VoteRequest():
            return m.VoteRequest(
                int(p.replica_epoch),
                int(p.replica_id),
                int(p.last_offset_epoch),
                int(p.last_offset),
                bool(p.pre_vote),
            )
        case vote_res.VoteResponse():
            return m.VoteResponse(
                int(p.error_code), int(p.leader_id), int(p.leader_epoch), bool(p.vote_granted)
            )
        case begin_req.BeginQuorumEpochRequest():
            return m.BeginQuorumEpochRequest(int(p.leader_id), int(p.leader_epoch))
        case begin_res.BeginQuorumEpochResponse():
            return m.BeginQuorumEpochResponse(
                int(p.error_code), int(p.leader_id), int(p.leader_epoch)
            )
        case end_req.EndQuorumEpochRequest():
            return m.EndQuorumEpochRequest(
                int(p.leader_id), int(p.leader_epoch), tuple(int(s) for s in p.preferred_successors)
            )
        case end_res.EndQuorumEpochResponse():
            return m.EndQuorumEpochResponse(
                int(p.error_code), int(p.leader_id), int(p.leader_epoch)
            )
        case _:
            return _decode_fetches(entity, p)


def _decode_fetches(entity: Any, p: Any) -> m.Message:
    def snapshot(s: Any) -> OffsetAndEpoch | None:
        return None if int(s.end_offset) < 0 else OffsetAndEpoch(int(s.end_offset), int(s.epoch))

    match entity:
        case fetch_req.FetchRequest():
            return m.FetchRequest(
                int(entity.replica_state.replica_id),
                int(p.current_leader_epoch),
                int(p.fetch_offset),
                int(p.last_fetched_epoch),
                int(p.log_start_offset),
                millis(entity.max_wait),
            )
        case fetch_res.FetchResponse():
            diverging = (
                None
                if int(p.diverging_epoch.epoch) < 0
                else m.EpochEndOffset(
                    int(p.diverging_epoch.epoch), int(p.diverging_epoch.end_offset)
                )
            )
            return m.FetchResponse(
                int(p.error_code),
                int(p.current_leader.leader_id),
                int(p.current_leader.leader_epoch),
                int(p.high_watermark),
                int(p.log_start_offset),
                diverging,
                snapshot(p.snapshot_id),
                records_to_entries(p.records),
            )
        case snap_req.FetchSnapshotRequest():
            found = snapshot(p.snapshot_id)
            if found is None:
                raise ValueError("FetchSnapshot request without a snapshot id")
            return m.FetchSnapshotRequest(
                int(entity.replica_id),
                int(p.current_leader_epoch),
                found,
                int(p.position),
                int(entity.max_bytes),
            )
        case snap_res.FetchSnapshotResponse():
            found = snapshot(p.snapshot_id) or OffsetAndEpoch(-1, -1)
            return m.FetchSnapshotResponse(
                int(p.error_code),
                int(p.current_leader.leader_id),
                int(p.current_leader.leader_epoch),
                found,
                int(p.size),
                int(p.position),
                bytes(p.unaligned_records),
            )
    raise TypeError(f"not a quorum message: {type(entity).__name__}")
