"""Produce: append each partition's batches on its leader and answer per ``acks``.

``acks=0`` gets no response at all; ``acks=1`` is answered after the leader's append;
``acks=all`` (-1) waits until the high watermark passes the batch, i.e. every in-sync
replica has it, or the request's timeout expires (REQUEST_TIMED_OUT).

The internal topics (``__consumer_offsets``, ``__transaction_state``) are written by the
coordinators only: a client's Produce to them gets INVALID_TOPIC_EXCEPTION, as in Kafka.
A student's stray record there would otherwise be replayed by every coordinator that
loads the partition. The one exception is Kafka's too: a client whose client id is
``__admin_client`` (Kafka's ``AdminUtils.ADMIN_CLIENT_ID``, its ``internalTopicsAllowed``)
may write them, which is how a tool (or a test) puts records of Kafka's own format there
on purpose.

Produce v10 tells where the leader is when this broker is not it (KIP-951, see
``leader_discovery``). A transactional batch that would open its transaction on a
partition is first verified with the transaction coordinator (KIP-890, see
``transaction_verification``): one the coordinator does not know to be in the producer's
ongoing transaction is refused, TRANSACTION_ABORTABLE from v11 on and INVALID_TXN_STATE
before; a retriable failure to verify is NOT_ENOUGH_REPLICAS, as in Kafka. Produce v12 is
transaction version 2: that first batch *adds* its partition to the transaction instead.
"""

from __future__ import annotations

from typing import Any

from kafkalite.broker.context import RequestContext
from kafkalite.broker.data_plane.handlers import leader_discovery
from kafkalite.broker.data_plane.handlers.leader_discovery import LeaderDiscovery
from kafkalite.broker.data_plane.replica_manager import ProduceResult, ReplicaManager
from kafkalite.broker.data_plane.transaction_verification import (
    RETRIABLE,
    TransactionVerifier,
    transaction_ongoing,
)
from kafkalite.broker.handler_registry import api
from kafkalite.controller.topic_control import INTERNAL_TOPICS
from kafkalite.metadata.image import MetadataImage
from kafkalite.protocol.api_keys import ApiKeys
from kafkalite.protocol.codec import EncodedResponse, millis
from kafkalite.protocol.errors import ErrorCode, KafkaError
from kafkalite.protocol.produce_request import decode_produce_request
from kafkalite.protocol.produce_response import encode_produce_response
from kafkalite.protocol.record_batch import RecordBatchHeader, parse_header
from kafkalite.storage.errors import StorageError
from kafkalite.topic_partition import TopicPartition

VALID_ACKS = (-1, 0, 1)
ADMIN_CLIENT_ID = "__admin_client"
"""The client id Kafka lets write the internal topics (``AdminUtils.ADMIN_CLIENT_ID``)."""
TRANSACTION_ABORTABLE_VERSION = 11  # KIP-890: the client knows TRANSACTION_ABORTABLE
TRANSACTION_V2_VERSION = 12
"""KIP-890 part 2: a transactional producer's first write to a partition adds it to its
transaction (the leader asks the coordinator), instead of an AddPartitionsToTxn."""
NOT_IN_TRANSACTION = "Partition was not added to the transaction"


def verification_refusal(version: int, error: ErrorCode) -> ProduceResult:
    """What a Produce gets when its batch could not be verified or its partition added
    (Kafka's mapping in ``ReplicaManager`` and ``AddPartitionsToTxnManager``): a producer
    of transaction version 2 is told CONCURRENT_TRANSACTIONS as it is (its previous
    transaction still ending, the common case), an older one NOT_ENOUGH_REPLICAS."""
    if error == ErrorCode.concurrent_transactions and version >= TRANSACTION_V2_VERSION:
        return ProduceResult(error, message=error.name.upper())
    if error in RETRIABLE:
        message = (
            "Unable to verify the partition has been added to the transaction. "
            f"Underlying error: {error.name.upper()}"
        )
        return ProduceResult(ErrorCode.not_enough_replicas, message=message)
    if error == ErrorCode.producer_fenced:
        return ProduceResult(ErrorCode.invalid_producer_epoch, message=error.name.upper())
    if error in (ErrorCode.transaction_abortable, ErrorCode.invalid_txn_state):
        abortable = version >= TRANSACTION_ABORTABLE_VERSION
        code = ErrorCode.transaction_abortable if abortable else ErrorCode.invalid_txn_state
        return ProduceResult(code, message=NOT_IN_TRANSACTION)
    return ProduceResult(error, message=error.name.upper())


class ProduceApi:
    """Appends through the replica manager, which also waits for the acks; a refused
    partition's current leader is read from the metadata image."""

    def __init__(
        self, replicas: ReplicaManager, image: MetadataImage, verifier: TransactionVerifier
    ) -> None:
        self._replicas = replicas
        self._image = image
        self._verifier = verifier

    def _opens_transaction(self, partition: TopicPartition, records: bytes | None) -> int | None:
        """The producer id of a transactional batch that would open its transaction on a
        partition this broker leads (None: nothing to verify)."""
        if not records:
            return None
        try:
            header: RecordBatchHeader = parse_header(records)
            led = self._replicas.get_partition(*partition)
            led.check_leader()
        except (KafkaError, StorageError):
            return None  # the append answers for it
        if not (header.is_transactional and header.has_producer_id):
            return None
        ongoing = transaction_ongoing(
            led.log.producer_state, header.producer_id, header.producer_epoch
        )
        return None if ongoing else header.producer_id

    async def _verify(
        self, request: Any, version: int
    ) -> dict[TopicPartition, tuple[int, object | ErrorCode]]:
        """Partition -> (producer id, a guard token, or why it cannot be appended), for each
        transactional batch that would open its transaction on its partition: verified
        (if verification is on), or, from v12 (transaction version 2), added."""
        verifier = self._verifier
        add = version >= TRANSACTION_V2_VERSION
        if request.transactional_id is None or not (add or verifier.enabled()):
            return {}
        opening: dict[TopicPartition, tuple[int, int]] = {}
        for topic in request.topic_data:
            for part in topic.partition_data:
                tp = (topic.name, int(part.index))
                producer_id = self._opens_transaction(tp, part.records)
                if producer_id is not None:
                    opening[tp] = (producer_id, parse_header(part.records).producer_epoch)
        if not opening:
            return {}
        # every batch of one request comes from one producer, with one id and epoch
        producer_id, epoch = next(iter(opening.values()))
        tokens = {tp: verifier.guards.start(tp, producer_id) for tp in opening}
        if add:
            image = self._image
            verdicts = await verifier.add(
                request.transactional_id,
                producer_id,
                epoch,
                set(opening),
                image.broker_int("add.partitions.to.txn.retry.backoff.ms") / 1000,
                image.broker_int("add.partitions.to.txn.retry.backoff.max.ms") / 1000,
            )
        else:
            verdicts = await verifier.verify(
                request.transactional_id, producer_id, epoch, set(opening)
            )
        return {
            tp: (producer_id, tokens[tp])
            if verdicts.get(tp, ErrorCode.unknown_server_error) == ErrorCode.none
            else (producer_id, verdicts.get(tp, ErrorCode.unknown_server_error))
            for tp in opening
        }

    @api(ApiKeys.PRODUCE, 3, 12, decode=decode_produce_request)
    async def produce(self, ctx: RequestContext, request: Any) -> Any:
        replicas = self._replicas
        acks = int(request.acks)
        internal_topics_allowed = ctx.request.client_id == ADMIN_CLIENT_ID
        verified = await self._verify(request, ctx.version) if acks in VALID_ACKS else {}
        guards = self._verifier.guards
        results: list[tuple[str, int, ProduceResult]] = []
        for topic in request.topic_data:
            for part in topic.partition_data:
                tp = (topic.name, int(part.index))
                producer_id, verdict = verified.get(tp, (-1, None))
                if isinstance(verdict, ErrorCode):
                    result = verification_refusal(ctx.version, verdict)
                elif (
                    verdict is not None
                    and not guards.holds(tp, producer_id, verdict)
                    and self._opens_transaction(tp, part.records) is not None
                ):
                    # its transaction ended on the partition while the coordinator answered
                    result = verification_refusal(ctx.version, ErrorCode.invalid_txn_state)
                elif acks not in VALID_ACKS:
                    result = ProduceResult(ErrorCode.invalid_required_acks)
                elif topic.name in INTERNAL_TOPICS and not internal_topics_allowed:
                    result = ProduceResult(
                        ErrorCode.invalid_topic_exception,
                        message=f"Cannot append to internal topic {topic.name}",
                    )
                else:
                    result = replicas.append_to_leader(
                        topic.name, int(part.index), part.records, acks
                    )
                results.append((topic.name, int(part.index), result))
        if acks == 0:
            return None
        if acks == -1:
            await replicas.wait_for_acks(results, millis(request.timeout) / 1000)
        return self._response(ctx, results)

    def _response(self, ctx: RequestContext, results: list[tuple[str, int, ProduceResult]]) -> Any:
        """The usual answer is encoded by hand (``protocol.produce_response``); one that
        tells where a refused partition's leader is (KIP-951) is built with kio."""
        discover = ctx.version >= leader_discovery.PRODUCE_VERSION
        if not (discover and any(r.error == ErrorCode.not_leader_or_follower for *_, r in results)):
            by_name: dict[str, list[tuple[int, ProduceResult]]] = {}
            for topic, index, r in results:
                by_name.setdefault(topic, []).append((index, r))
            return EncodedResponse(
                [
                    encode_produce_response(
                        ctx.version, ctx.request.correlation_id, list(by_name.items())
                    )
                ]
            )
        s = ctx.schema
        leaders = LeaderDiscovery(self._image)
        no_leader = s.LeaderIdAndEpoch(leader_id=-1, leader_epoch=-1) if discover else None
        by_topic: dict[str, list[Any]] = {}
        for topic, index, r in results:
            refused = discover and r.error == ErrorCode.not_leader_or_follower
            by_topic.setdefault(topic, []).append(
                s.PartitionProduceResponse(
                    index=index,
                    error_code=r.error,
                    base_offset=r.base_offset,
                    log_append_time=r.log_append_time_ms,
                    log_start_offset=r.log_start_offset,
                    record_errors=(),
                    error_message=r.message,
                    current_leader=leaders.current_leader(s, topic, index)
                    if refused
                    else no_leader,
                )
            )
        return s.ProduceResponse(
            responses=tuple(
                s.TopicProduceResponse(name=name, partition_responses=tuple(parts))
                for name, parts in by_topic.items()
            ),
            throttle_time=0,
            node_endpoints=leaders.node_endpoints(s) if discover else (),
        )
