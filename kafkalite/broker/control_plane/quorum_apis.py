"""The metadata quorum's RPCs on the controller listener, and DescribeQuorum.

Vote, BeginQuorumEpoch, EndQuorumEpoch, Fetch and FetchSnapshot are decoded into the Raft
core's messages (``raft.wire``) and answered by this broker's voter. DescribeQuorum is
what students and the CLI use to see the quorum; only the leader knows every voter's
progress, so a client listener forwards it there.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kio.schema.begin_quorum_epoch.v0.request import BeginQuorumEpochRequest
from kio.schema.end_quorum_epoch.v0.request import EndQuorumEpochRequest
from kio.schema.fetch.v15.request import FetchRequest as QuorumFetchRequest
from kio.schema.fetch_snapshot.v0.request import FetchSnapshotRequest
from kio.schema.vote.v2.request import VoteRequest

from kafkalite.broker.context import Connection, RequestContext
from kafkalite.broker.control_plane.raft_quorum import RaftQuorum
from kafkalite.broker.control_plane_api import VoterAddress
from kafkalite.broker.handler_registry import api, controller_api
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.codec import EncodedResponse
from kafkalite.protocol.errors import ErrorCode
from kafkalite.raft import messages as m
from kafkalite.raft import wire
from kafkalite.raft.quorum_fetch_request import decode_quorum_fetch
from kafkalite.raft.wire import METADATA_TOPIC


def _source(message: m.Message) -> int:
    match message:
        case m.VoteRequest():
            return message.candidate_id
        case m.BeginQuorumEpochRequest() | m.EndQuorumEpochRequest():
            return message.leader_id
        case m.FetchRequest() | m.FetchSnapshotRequest():
            return message.replica_id
    raise ValueError(f"not a quorum request: {message!r}")


class QuorumApis:
    """This broker's voter answers the quorum's RPCs; DescribeQuorum reads its view."""

    def __init__(
        self,
        quorum: RaftQuorum,
        voters: dict[int, VoterAddress],
        watch_connection: Callable[[Connection, int], None],
    ) -> None:
        """``watch_connection``: the controller learns which voter each connection comes
        from (if it closes, that broker's process is gone)."""
        self._quorum = quorum
        self._voters = voters
        self._watch_connection = watch_connection

    @controller_api(ApiKeys.VOTE, VoteRequest.__version__, VoteRequest.__version__)
    @controller_api(
        ApiKeys.BEGIN_QUORUM_EPOCH,
        BeginQuorumEpochRequest.__version__,
        BeginQuorumEpochRequest.__version__,
    )
    @controller_api(
        ApiKeys.END_QUORUM_EPOCH,
        EndQuorumEpochRequest.__version__,
        EndQuorumEpochRequest.__version__,
    )
    @controller_api(
        ApiKeys.FETCH_SNAPSHOT, FetchSnapshotRequest.__version__, FetchSnapshotRequest.__version__
    )
    async def quorum_rpc(self, ctx: RequestContext, request: Any) -> Any:
        return await self._answer(ctx, wire.decode(request))

    @controller_api(
        ApiKeys.FETCH,
        QuorumFetchRequest.__version__,
        QuorumFetchRequest.__version__,
        decode=decode_quorum_fetch,
    )
    async def quorum_fetch(self, ctx: RequestContext, request: Any) -> Any:
        """A voter's Fetch, read by hand into the Raft message (or by kio, for a shape
        no voter of ours sends)."""
        message = request if isinstance(request, m.FetchRequest) else wire.decode(request)
        return await self._answer(ctx, message)

    async def _answer(self, ctx: RequestContext, message: m.Message) -> Any:
        quorum = self._quorum
        source = _source(message)
        self._watch_connection(ctx.connection, source)
        response = await quorum.handle_request(source, ctx.request.correlation_id, message)
        if isinstance(response, m.FetchResponse):  # the one a leader answers most
            return EncodedResponse(wire.fetch_response_frame(response, ctx.request.correlation_id))
        return wire.encode(response, quorum.cluster_id)

    @api(ApiKeys.DESCRIBE_QUORUM, 0, 2, forward=True)
    @controller_api(ApiKeys.DESCRIBE_QUORUM, 0, 2)
    async def describe_quorum(self, ctx: RequestContext, request: Any) -> Any:
        s = ctx.schema
        info = self._quorum.view.info
        asked = [
            (t.topic_name, [int(p.partition_index) for p in t.partitions]) for t in request.topics
        ]
        if info is None:
            return s.DescribeQuorumResponse(
                error_code=ErrorCode.not_leader_or_follower,
                error_message=f"broker {self._quorum.node_id} does not lead the quorum",
                topics=(),
                nodes=(),
            )
        topics = []
        for name, partitions in asked:
            parts = []
            for index in partitions:
                known = name == METADATA_TOPIC and index == 0
                parts.append(
                    s.PartitionData(
                        partition_index=index,
                        error_code=ErrorCode.none
                        if known
                        else ErrorCode.unknown_topic_or_partition,
                        error_message=None,
                        leader_id=info.leader_id if known else -1,
                        leader_epoch=info.leader_epoch if known else -1,
                        high_watermark=info.high_watermark if known else -1,
                        current_voters=tuple(
                            s.ReplicaState(
                                replica_id=v.replica_id,
                                replica_directory_id=None,
                                log_end_offset=v.log_end_offset,
                                last_fetch_timestamp=v.last_fetch_timestamp,
                                last_caught_up_timestamp=v.last_caught_up_timestamp,
                            )
                            for v in info.current_voters
                        )
                        if known
                        else (),
                        observers=(),
                    )
                )
            topics.append(s.TopicData(topic_name=name, partitions=tuple(parts)))
        nodes = (
            tuple(
                s.Node(
                    node_id=v.node_id,
                    listeners=(s.Listener(name="CONTROLLER", host=v.host, port=v.port),),
                )
                for v in self._voters.values()
            )
            if s.has_field("DescribeQuorumResponse", "nodes")
            else ()
        )
        return s.DescribeQuorumResponse(
            error_code=ErrorCode.none, error_message=None, topics=tuple(topics), nodes=nodes
        )
