"""The transaction requests between brokers: WriteTxnMarkers and AddPartitionsToTxn.

The coordinator sends WriteTxnMarkers (v1) to a leader's client listener, as Kafka's
brokers do, at the address replication uses (through the lab's link proxies, so an
isolated leader cannot be reached and its marker waits). A partition leader, the other way,
sends AddPartitionsToTxn (v5) to a transactional id's coordinator to verify a
transactional batch, or to add its partition to the transaction (KIP-890,
``transaction_verification``). One connection per
broker. A timed-out request closes its connection, so that a late answer is never taken
for the retry's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kio.schema.add_partitions_to_txn.v5 import request as add_req
from kio.schema.write_txn_markers.v1 import request as markers_req

from kafkalite.coordinator.transaction.markers import MarkerChannelError, TxnMarkerEntry
from kafkalite.metadata.image import MetadataImage
from kafkalite.network.client import PeerConnection, PeerUnavailableError
from kafkalite.protocol.codec import build
from kafkalite.protocol.errors import ErrorCode
from kafkalite.topic_partition import TopicPartition

REQUEST_TIMEOUT_S = 10.0


class BrokerMarkerChannel:
    """Finds leaders in the metadata image and their addresses through ``endpoint`` (the
    replication address of a registered broker, None for an unknown one)."""

    def __init__(
        self,
        broker_id: int,
        image: MetadataImage,
        endpoint: Callable[[int], tuple[str, int] | None],
    ) -> None:
        self._broker_id = broker_id
        self._image = image
        self._endpoint = endpoint
        self._connections: dict[int, PeerConnection] = {}

    def leader_of(self, topic: str, partition: int) -> int | None:
        found = self._image.topic(topic)
        if found is None or partition not in found.partitions:
            return None
        return found.partitions[partition].leader

    def _connection(self, broker_id: int) -> PeerConnection:
        connection = self._connections.get(broker_id)
        if connection is None:
            endpoint = self._endpoint(broker_id)
            if endpoint is None:
                raise MarkerChannelError(f"broker {broker_id} is not registered")
            connection = PeerConnection(*endpoint, f"kafkalite-txn-{self._broker_id}")
            self._connections[broker_id] = connection
        return connection

    async def write_txn_markers(
        self, broker_id: int, marker: TxnMarkerEntry, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, ErrorCode]:
        by_topic: dict[str, list[int]] = {}
        for topic, index in partitions:
            by_topic.setdefault(topic, []).append(index)
        request = build(
            markers_req.WriteTxnMarkersRequest,
            {
                "markers": (
                    build(
                        markers_req.WritableTxnMarker,
                        {
                            "producer_id": marker.producer_id,
                            "producer_epoch": marker.producer_epoch,
                            "transaction_result": marker.committed,
                            "coordinator_epoch": marker.coordinator_epoch,
                            "topics": tuple(
                                build(
                                    markers_req.WritableTxnMarkerTopic,
                                    {"name": t, "partition_indexes": tuple(ps)},
                                )
                                for t, ps in by_topic.items()
                            ),
                        },
                    ),
                )
            },
        )
        connection = self._connection(broker_id)
        try:
            response: Any = await connection.request(request, REQUEST_TIMEOUT_S)
        except PeerUnavailableError as exc:
            await connection.close()
            raise MarkerChannelError(str(exc)) from exc
        return {
            (t.name, int(p.partition_index)): ErrorCode(p.error_code)
            for m in response.markers
            for t in m.topics
            for p in t.partitions
        }

    async def verify_partitions(
        self,
        broker_id: int,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: set[TopicPartition],
        verify_only: bool = True,
    ) -> dict[TopicPartition, ErrorCode]:
        """Ask ``broker_id``'s coordinator whether ``partitions`` are in the producer's
        ongoing transaction, or (``verify_only`` false, transaction version 2) to add them
        to it (NETWORK_EXCEPTION for all when it cannot be reached)."""
        by_topic: dict[str, list[int]] = {}
        for topic, index in sorted(partitions):
            by_topic.setdefault(topic, []).append(index)
        transaction = build(
            add_req.AddPartitionsToTxnTransaction,
            {
                "transactional_id": transactional_id,
                "producer_id": producer_id,
                "producer_epoch": producer_epoch,
                "verify_only": verify_only,
                "topics": tuple(
                    build(add_req.AddPartitionsToTxnTopic, {"name": t, "partitions": tuple(ps)})
                    for t, ps in by_topic.items()
                ),
            },
        )
        request = build(add_req.AddPartitionsToTxnRequest, {"transactions": (transaction,)})
        try:
            connection = self._connection(broker_id)
            response: Any = await connection.request(request, REQUEST_TIMEOUT_S)
        except (PeerUnavailableError, MarkerChannelError):
            if broker_id in self._connections:
                await self._connections[broker_id].close()
            return dict.fromkeys(partitions, ErrorCode.network_exception)
        if response.error_code != ErrorCode.none:
            return dict.fromkeys(partitions, ErrorCode(response.error_code))
        return {
            (t.name, int(p.partition_index)): ErrorCode(p.partition_error_code)
            for r in response.results_by_transaction
            for t in r.topic_results
            for p in t.results_by_partition
        }

    async def close(self) -> None:
        for connection in self._connections.values():
            await connection.close()
        self._connections.clear()
