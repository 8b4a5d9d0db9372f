"""The driver's questions to the cluster: which partitions, and which offsets.

Asked with librdkafka's admin client (Metadata and ListOffsets, with the isolation level:
``latest`` is the last stable offset under read_committed, the high watermark otherwise).
Every question is bounded by ``kafkaConsumer.pollTimeoutMs``; errors a failover causes
(no leader yet, a leader that moved) are asked again until then, and what remains is one
clear line: an unreachable cluster, an unknown topic, a missing partition.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Mapping
from typing import Any

from confluent_kafka import (
    OFFSET_INVALID,
    IsolationLevel,
    KafkaError,
    KafkaException,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient, OffsetSpec

from kafkalite.spark.offsets import EARLIEST, LATEST, PartitionOffsets
from kafkalite.spark.options import Isolation, KafkaConnection, Subscription

RETRY_BACKOFF_S = 0.2
# librdkafka (2.16) answers a ListOffsets whose request to a partition's leader timed out
# (a leader killed a moment ago: its metadata still names it, and the connection is
# refused until the request's timeout) with offset -1001 (OFFSET_INVALID) and no error,
# an answer no broker gives (ListOffsets says -1 for "no offset"). Each round is bounded,
# so that the next one asks the new leader, with the partition's metadata refreshed.
ROUND_S = 2.0


class KafkaUnavailableError(RuntimeError):
    """The cluster did not answer within the time bound."""


class UnknownTopicError(LookupError):
    """A topic (or an assigned partition) the query names does not exist."""


def is_transient(error: KafkaError) -> bool:
    """Whether asking again may succeed: an error a leader's failover or a slow broker
    causes. librdkafka hands them to the caller where Kafka's Java clients retry."""
    return bool(error.retriable()) or error.code() in (
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.NOT_LEADER_FOR_PARTITION,
        KafkaError.OFFSET_NOT_AVAILABLE,
        KafkaError.FENCED_LEADER_EPOCH,
        KafkaError.UNKNOWN_LEADER_EPOCH,
        KafkaError.REQUEST_TIMED_OUT,
        KafkaError._TRANSPORT,
        KafkaError._TIMED_OUT,
        KafkaError._ALL_BROKERS_DOWN,
    )


class ClusterLookup:
    """Partitions and offsets as seen now. Holds one admin client: make it on the driver
    and never pickle it (the source keeps it out of its pickled state)."""

    def __init__(self, connection: KafkaConnection, isolation: Isolation) -> None:
        self.connection = connection
        self.isolation = (
            IsolationLevel.READ_COMMITTED
            if isolation == "read_committed"
            else IsolationLevel.READ_UNCOMMITTED
        )
        self.timeout_s = connection.timeout_ms / 1000
        self.admin = AdminClient(connection.client_config())

    def _unreachable(self, detail: object) -> KafkaUnavailableError:
        return KafkaUnavailableError(
            f"kafkalite: no broker of {self.connection.bootstrap_servers} "
            f"(kafka.bootstrap.servers) answered within {self.timeout_s:.0f} s "
            f"(kafkaConsumer.pollTimeoutMs): {detail}"
        )

    def topics(self) -> dict[str, int]:
        """Every topic's partition count (internal ``__`` topics left out). A failed
        metadata request (a broker that just died, a connection refused) is asked again,
        of any broker, until the time bound."""
        deadline = time.monotonic() + self.timeout_s
        while True:
            remaining = deadline - time.monotonic()
            try:
                metadata = self.admin.list_topics(timeout=max(remaining, 0.5))
                break
            except KafkaException as exc:
                if remaining <= 0 or not is_transient(exc.args[0]):
                    raise self._unreachable(exc.args[0]) from None
                time.sleep(RETRY_BACKOFF_S)
        return {
            name: len(topic.partitions)
            for name, topic in metadata.topics.items()
            if topic.error is None and not name.startswith("__")
        }

    def partitions(self, subscription: Subscription, require_topics: bool) -> list[tuple[str, int]]:
        """The partitions the query reads now. ``require_topics``: named topics must exist
        (at the start of a query; later a deleted topic is data loss, not this error)."""
        topics = self.topics()
        if subscription.kind == "assign":
            missing = [f"{t}-{p}" for t, p in subscription.partitions if p >= topics.get(t, 0)]
            if missing and require_topics:
                raise UnknownTopicError(
                    f"kafkalite: assigned partitions do not exist: {', '.join(missing)}"
                )
            return [(t, p) for t, p in subscription.partitions if p < topics.get(t, 0)]
        if subscription.kind == "subscribe" and require_topics:
            missing = [t for t in subscription.topics if t not in topics]
            if missing:
                raise UnknownTopicError(
                    f"kafkalite: unknown topic {', '.join(map(repr, missing))} "
                    f"({subscription.describe()}); existing topics: "
                    f"{', '.join(sorted(topics)) or 'none'}. Create it first, or use "
                    "subscribePattern to wait for topics that do not exist yet."
                )
        return sorted(
            (name, p)
            for name, count in topics.items()
            if subscription.matches(name)
            for p in range(count)
        )

    def offsets(self, partitions: Iterable[tuple[str, int]], at: int) -> PartitionOffsets:
        """``at`` is EARLIEST, LATEST or a timestamp in ms; for a timestamp, -1 means no
        record at or after it."""
        if at == EARLIEST:
            spec = OffsetSpec.earliest()  # type: ignore[no-untyped-call]
        elif at == LATEST:
            spec = OffsetSpec.latest()  # type: ignore[no-untyped-call]
        else:
            spec = OffsetSpec.for_timestamp(at)
        return self._list_offsets({tp: spec for tp in partitions})

    def offsets_for_times(self, stamps: Mapping[tuple[str, int], int]) -> PartitionOffsets:
        return self._list_offsets({tp: OffsetSpec.for_timestamp(ms) for tp, ms in stamps.items()})

    def _list_offsets(self, specs: Mapping[tuple[str, int], Any]) -> PartitionOffsets:
        result: PartitionOffsets = {}
        pending = dict(specs)
        deadline = time.monotonic() + self.timeout_s
        last: object = "no answer"
        unknown = ""
        leaderless: set[str] = set()
        while pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._gave_up(sorted(pending)[:5], unknown, bool(leaderless), last)
            leaderless = set()
            unanswered: set[str] = set()
            futures = self.admin.list_offsets(
                {TopicPartition(t, p): spec for (t, p), spec in pending.items()},
                isolation_level=self.isolation,
                request_timeout=min(max(remaining, 0.5), ROUND_S),
            )
            for tp, future in futures.items():
                try:
                    offset = future.result().offset
                    if offset == OFFSET_INVALID:
                        unanswered.add(tp.topic)
                        last = "its leader did not answer"
                        continue
                    result[(tp.topic, tp.partition)] = offset
                    del pending[(tp.topic, tp.partition)]
                except KafkaException as exc:
                    error: KafkaError = exc.args[0]
                    # a broker that restarts may not know a topic until it has replayed the
                    # metadata log: asked again, like a lost leader, until the time bound
                    if error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
                        unknown = f"kafkalite: {tp.topic}-{tp.partition} does not exist"
                    elif error.code() == KafkaError._NOENT:
                        leaderless.add(tp.topic)
                    elif not is_transient(error):
                        raise RuntimeError(
                            f"kafkalite: ListOffsets for {tp.topic}-{tp.partition}: {error.str()}"
                        ) from None
                    last = error.str()
            if pending:
                time.sleep(RETRY_BACKOFF_S)
            self._refresh_metadata(leaderless | unanswered, deadline)
        return result

    def _gave_up(
        self, pending: list[tuple[str, int]], unknown: str, leaderless: bool, last: object
    ) -> Exception:
        if unknown:
            return UnknownTopicError(unknown)
        if leaderless:
            return KafkaUnavailableError(
                f"kafkalite: no leader for {pending} within {self.timeout_s:.0f} s "
                "(kafkaConsumer.pollTimeoutMs): every replica is down, or no in-sync "
                "replica is left to elect"
            )
        return self._unreachable(f"ListOffsets for {pending}: {last}")

    def _refresh_metadata(self, topics: Iterable[str], deadline: float) -> None:
        """A partition with no leader - between a leader's death and its successor's
        election - fails librdkafka's ListOffsets with ``_NOENT`` ("Failed to query
        partition leaders: No leaders found"), and the admin client then answers every
        later ListOffsets from the leaderless entry in its metadata cache, without asking
        again (seen for a minute after the leader was back); a dead leader it still names
        is asked again likewise. A Metadata request for the topic replaces that entry; the
        next round asks the new leader."""
        for topic in topics:
            with contextlib.suppress(KafkaException):
                self.admin.list_topics(topic, timeout=max(deadline - time.monotonic(), 0.5))
