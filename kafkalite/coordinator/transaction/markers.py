"""Writing a decided transaction's markers to every partition in it, until all are written.

Kafka's ``TransactionMarkerChannelManager``: once PrepareCommit or PrepareAbort is in the
transaction log, the outcome is decided, and the coordinator sends WriteTxnMarkers to the
current leader of each partition in the transaction. A leader answers per partition; each
partition whose marker is replicated there is done. Everything else is retried, with the
leader looked up again each round, because leaders move and brokers die: this is what
makes a transaction end on every partition, never on some only. Sending stops early only
when this coordinator is no longer the one in charge (a newer coordinator epoch will
resend from its own copy of the log).

Errors a leader may answer (Kafka's ``TransactionMarkerRequestCompletionHandler``):

- NONE: the marker is written (and replicated): done;
- NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS(_AFTER_APPEND),
  REQUEST_TIMED_OUT, ...: retry, at the leader of the moment;
- INVALID_PRODUCER_EPOCH: the partition saw a newer epoch of the producer, which only a
  later decision of this coordinator can have written: nothing left to do there;
- TRANSACTION_COORDINATOR_FENCED: a newer coordinator wrote there: stop.

A partition whose topic was deleted needs no marker. The network is injected
(``MarkerChannel``), so this logic runs in tests without sockets.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from kafkalite.protocol.errors import ErrorCode
from kafkalite.topic_partition import TopicPartition

log = logging.getLogger(__name__)

BACKOFF_S = 0.05
MAX_BACKOFF_S = 1.0
REPORT_EVERY_S = 5.0


@dataclass(frozen=True, slots=True)
class TxnMarkerEntry:
    """One transaction's outcome, as sent to a leader in WriteTxnMarkers."""

    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    committed: bool
    partitions: frozenset[TopicPartition]


class MarkerChannelError(ConnectionError):
    """The leader could not be reached or did not answer."""


class MarkerChannel(Protocol):
    def leader_of(self, topic: str, partition: int) -> int | None:
        """The partition's leader, -1 while it has none; None if the topic is gone."""

    async def write_txn_markers(
        self, broker_id: int, marker: TxnMarkerEntry, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, ErrorCode]:
        """Ask ``broker_id`` to write ``marker`` on ``partitions``; its answer per partition.
        Raises MarkerChannelError when the broker cannot be reached."""


class MarkerOutcome(enum.Enum):
    WRITTEN = "written"  # every partition has its marker: the transaction can complete
    SUPERSEDED = "superseded"  # this coordinator is no longer in charge


_DONE = frozenset({ErrorCode.none, ErrorCode.invalid_producer_epoch})


async def write_markers(
    channel: MarkerChannel,
    marker: TxnMarkerEntry,
    still_in_charge: Callable[[], bool],
    backoff_s: float = BACKOFF_S,
    pending: set[TopicPartition] | None = None,
) -> MarkerOutcome:
    """Write ``marker`` on each of its partitions, retrying until all are written.
    ``pending`` (filled here) shows at any moment the partitions still without one."""
    pending = set() if pending is None else pending
    pending.update(marker.partitions)
    delay = backoff_s
    loop = asyncio.get_running_loop()
    reported = loop.time()
    last_errors: dict[TopicPartition, str] = {}
    while pending:
        if not still_in_charge():
            return MarkerOutcome.SUPERSEDED
        by_leader = _by_leader(channel, pending)
        answers = await asyncio.gather(
            *(_ask(channel, b, marker, tps) for b, tps in by_leader.items())
        )
        if _settle(answers, pending, last_errors):
            return MarkerOutcome.SUPERSEDED
        if pending and loop.time() - reported >= REPORT_EVERY_S:
            reported = loop.time()
            log.info(
                "markers of producer %d still pending: %s",
                marker.producer_id,
                {f"{t}-{p}": last_errors.get((t, p), "no leader") for t, p in sorted(pending)},
            )
        if pending:
            await asyncio.sleep(delay)
            delay = min(delay * 2, MAX_BACKOFF_S)
    return MarkerOutcome.WRITTEN


def _by_leader(
    channel: MarkerChannel, pending: set[TopicPartition]
) -> dict[int, list[TopicPartition]]:
    """Pending partitions by their current leader; a deleted topic's need no marker."""
    by_leader: dict[int, list[TopicPartition]] = {}
    for tp in sorted(pending):
        leader = channel.leader_of(*tp)
        if leader is None:
            pending.discard(tp)
        elif leader >= 0:
            by_leader.setdefault(leader, []).append(tp)
    return by_leader


def _settle(
    answers: list[dict[TopicPartition, ErrorCode]],
    pending: set[TopicPartition],
    last_errors: dict[TopicPartition, str],
) -> bool:
    """Take the leaders' answers off ``pending``; True if a newer coordinator wrote."""
    for answer in answers:
        for tp, error in answer.items():
            if error == ErrorCode.transaction_coordinator_fenced:
                return True
            if error in _DONE:
                if error != ErrorCode.none:
                    log.warning("marker for %s not needed: %s", tp, error.name)
                pending.discard(tp)
            else:
                last_errors[tp] = error.name
    return False


async def _ask(
    channel: MarkerChannel, broker_id: int, marker: TxnMarkerEntry, tps: list[TopicPartition]
) -> dict[TopicPartition, ErrorCode]:
    try:
        return await channel.write_txn_markers(broker_id, marker, tps)
    except MarkerChannelError as exc:
        log.info("markers to broker %d failed: %s", broker_id, exc)
        return dict.fromkeys(tps, ErrorCode.network_exception)
