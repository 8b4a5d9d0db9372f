"""KIP-890's server-side defense: a partition leader verifies a transactional batch with the
transaction coordinator before it appends it.

Before KIP-890 a leader took any transactional batch: one that arrived after its
transaction had ended (a producer's delayed retry, a zombie's write) opened a transaction
on that partition which no coordinator knew of, so no marker and no timeout ever ended it
- a *hanging transaction*: the last stable offset stops there, and every read_committed
consumer with it. Since Kafka 3.6 (``transaction.partition.verification.enable``, on by
default) the leader first asks the coordinator, with AddPartitionsToTxn (v4+,
``verify_only``), whether the partition is in the producer's ongoing transaction. Only the
batch that would *open* the transaction on the partition is checked; the ones after it
find the transaction ongoing in the partition's producer state.

The answer comes back after a round trip, and meanwhile the transaction may have ended on
this partition (its marker appended): the verification is then stale. A
``VerificationGuards`` token, taken before asking and dropped by any marker for that
producer on that partition, says whether it still holds when the batch is appended
(Kafka's ``VerificationGuard``). Owned by the broker's event loop; not thread-safe.

With transaction version 2 (KIP-890 part 2: Produce v12, TxnOffsetCommit v5) the producer
no longer adds partitions to its transaction itself: the leader's request *adds* the
partition (``verify_only`` false), whatever ``transaction.partition.verification.enable``
says, as in Kafka.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from kafkalite.broker.data_plane.internal_topic import InternalTopic
from kafkalite.coordinator.partitioning import partition_for
from kafkalite.coordinator.transaction.coordinator import TransactionCoordinator
from kafkalite.coordinator.transaction.transaction_log import TRANSACTION_STATE_TOPIC
from kafkalite.metadata.image import MetadataImage
from kafkalite.protocol.errors import ErrorCode
from kafkalite.storage.producer_state import ProducerStateManager
from kafkalite.topic_partition import TopicPartition

RETRIABLE = frozenset(
    {
        ErrorCode.concurrent_transactions,
        ErrorCode.network_exception,
        ErrorCode.coordinator_load_in_progress,
        ErrorCode.coordinator_not_available,
        ErrorCode.not_coordinator,
    }
)
"""Verification failures a producer should just retry. Kafka answers them
NOT_ENOUGH_REPLICAS, which every client retries without refreshing its metadata."""
TRANSACTION_V2 = 2
"""The client transaction version of a partition a leader adds for its producer."""


def transaction_ongoing(
    producers: ProducerStateManager, producer_id: int, producer_epoch: int
) -> bool:
    """The producer's transaction at this epoch is open on the partition (a batch of it
    was appended): nothing more to verify or add there."""
    entry = producers.producers.get(producer_id)
    return (
        entry is not None
        and entry.current_txn_first_offset is not None
        and entry.producer_epoch == producer_epoch
    )


class VerifyChannel(Protocol):
    """How a leader reaches another broker's transaction coordinator."""

    def verify_partitions(
        self,
        broker_id: int,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: set[TopicPartition],
        verify_only: bool = True,
    ) -> Awaitable[dict[TopicPartition, ErrorCode]]: ...


@dataclass(slots=True)
class VerificationGuards:
    """A token per (partition, producer id), from the first verification of the producer's
    batches there until a marker for the producer reaches the partition (verifications
    in flight together share it, as Kafka's share one ``VerificationStateEntry``)."""

    _tokens: dict[tuple[TopicPartition, int], object] = field(default_factory=dict)

    def start(self, partition: TopicPartition, producer_id: int) -> object:
        return self._tokens.setdefault((partition, producer_id), object())

    def holds(self, partition: TopicPartition, producer_id: int, token: object) -> bool:
        """No marker for the producer reached the partition since ``start``."""
        return self._tokens.get((partition, producer_id)) is token

    def marker_written(self, partition: TopicPartition, producer_id: int) -> None:
        """A transaction of the producer ended on the partition: what was verified for it
        no longer holds."""
        self._tokens.pop((partition, producer_id), None)


class TransactionVerifier:
    """Asks the coordinator of a transactional id, on this broker or another."""

    def __init__(
        self,
        broker_id: int,
        image: MetadataImage,
        coordinator: TransactionCoordinator,
        transaction_state_topic: InternalTopic,
        channel: VerifyChannel,
        enabled: Callable[[], bool],
    ) -> None:
        self._broker_id = broker_id
        self._image = image
        self._coordinator = coordinator
        self._transaction_state_topic = transaction_state_topic
        self._channel = channel
        self.enabled = enabled
        self.guards = VerificationGuards()

    async def verify(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: set[TopicPartition],
        add: bool = False,
    ) -> dict[TopicPartition, ErrorCode]:
        """Per partition: NONE when it is in the producer's ongoing transaction, else why
        not (TRANSACTION_ABORTABLE, PRODUCER_FENCED, one of ``RETRIABLE``...). With ``add``
        (a producer of transaction version 2, whose first write to a partition is its
        request to add it), the coordinator adds the partitions instead."""
        count = self._transaction_state_topic.partition_count()
        if count <= 0:
            return dict.fromkeys(partitions, ErrorCode.coordinator_not_available)
        state_partition = partition_for(transactional_id, count)
        leader = self._image.partition_leader(TRANSACTION_STATE_TOPIC, state_partition)
        if leader == self._broker_id:
            if add:
                error = await self._coordinator.handle_add_partitions(
                    transactional_id, producer_id, producer_epoch, partitions, TRANSACTION_V2
                )
                return dict.fromkeys(partitions, error)
            return self._coordinator.handle_verify_partitions(
                transactional_id, producer_id, producer_epoch, partitions
            )
        registration = self._image.brokers.get(leader)
        if registration is None or registration.fenced:
            return dict.fromkeys(partitions, ErrorCode.coordinator_not_available)
        return await self._channel.verify_partitions(
            leader, transactional_id, producer_id, producer_epoch, partitions, not add
        )

    async def add(
        self,
        transactional_id: str,
        producer_id: int,
        producer_epoch: int,
        partitions: set[TopicPartition],
        retry_backoff_s: float,
        retry_for_s: float,
    ) -> dict[TopicPartition, ErrorCode]:
        """Transaction version 2: add ``partitions`` to the producer's transaction,
        retrying a while on CONCURRENT_TRANSACTIONS - its previous transaction is still
        writing its markers, the common case when a producer starts its next transaction
        at once (Kafka's leader retries too: ``add.partitions.to.txn.retry.backoff.ms``
        up to ``.max.ms``). What is still refused after that goes back to the producer."""
        deadline = time.monotonic() + retry_for_s
        while True:
            verdicts = await self.verify(
                transactional_id, producer_id, producer_epoch, partitions, add=True
            )
            waiting = ErrorCode.concurrent_transactions in verdicts.values()
            if not waiting or time.monotonic() >= deadline:
                return verdicts
            await asyncio.sleep(retry_backoff_s)
