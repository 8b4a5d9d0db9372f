"""Follower side of replication: one fetcher task per leader broker (Kafka's
``ReplicaFetcherManager`` and ``ReplicaFetcherThread``).

A partition this broker follows is first *truncated*: OffsetForLeaderEpoch asks the leader
where this replica's latest epoch ended there, and whatever lies beyond (an old leader's
uncommitted tail) is cut (``replication.truncation``). Then it is *fetched*: a Fetch with
this broker's ``replica_id`` from the log end offset, long-polled by the leader, whose
answer carries the records, the leader's high watermark and its log start offset, which
the follower's log start follows (records deleted on the leader stay deleted here). Asking
from the log end offset is also how the leader learns how far this follower has got.

A fetch answered OFFSET_OUT_OF_RANGE means this replica's log ends below the leader's log
start (it was away while the leader deleted records: it empties its log and restarts at
the leader's log start, or at the base of the batch that holds it: see ``Partition``) or
beyond the leader's end (it truncates again). A partition whose fetch failed waits
``replica.fetch.backoff.ms`` before its next try, as in Kafka, and the Fetch it sits out
is held no longer than that wait (``held_fetch_wait_ms``). A request not answered within
``request.timeout.ms`` (30 s, as in Kafka, whose fetcher's client has the broker's
``request.timeout.ms``; a Fetch also gets the time the leader may hold it) drops its
connection, as in Kafka: one gone silent would time out forever. The timeout is not a
measure of a healthy round trip: on a slow link (the lab's ``slow`` fault, seconds each
way) a shorter one expired before any answer could come back, and the follower asked
again and again, never truncating, never fetching. A partition's own
failure (a batch its log refuses) is logged at WARNING and backed off the same way, never
allowed to stop the other partitions this fetcher serves.

The leader is reached at its registered address, or through ``replica.fetch.endpoints``
when the lab's fault layer puts a proxy on each link.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kio.schema.fetch.v12 import request as fetch_req
from kio.schema.offset_for_leader_epoch.v4 import request as epoch_req

from kafkalite.broker.control_plane_api import parse_voters
from kafkalite.events import EventSink, EventType
from kafkalite.metadata.image import MetadataImage
from kafkalite.network.client import PeerConnection, PeerTimeoutError, PeerUnavailableError
from kafkalite.protocol.codec import build
from kafkalite.protocol.errors import ErrorCode
from kafkalite.protocol.fetch_response_reader import read_fetch_response
from kafkalite.replication.partition import Partition
from kafkalite.replication.truncation import truncation_offset
from kafkalite.storage.errors import StorageError
from kafkalite.supervision import Spawn
from kafkalite.topic_partition import TopicPartition

if TYPE_CHECKING:
    from kafkalite.broker.data_plane.replica_manager import ReplicaManager

log = logging.getLogger(__name__)

FETCH_MAX_BYTES = 16 * 1024 * 1024
PARTITION_MAX_BYTES = 4 * 1024 * 1024


def held_fetch_wait_ms(wait_max_ms: int, retry_ats: Iterable[float], now: float) -> int:
    """How long the leader may hold the next Fetch: ``replica.fetch.wait.max.ms``, but no
    longer than until the first partition now backing off (``retry_ats``, event-loop
    seconds) is due again. That partition is not in the Fetch, and nothing else would
    bring it back before the held Fetch ends: a new topic's follower that asked before its
    leader knew the topic would sit out the whole wait, 10 s, and leave the ISR after
    ``replica.lag.time.max.ms``. Kafka's fetcher gets the same from its short rounds: a
    Fetch waits at most 500 ms there, so a partition is back within a round of its
    backoff."""
    waits = [at - now for at in retry_ats if at > now]
    if not waits:
        return wait_max_ms
    return min(wait_max_ms, math.ceil(min(waits) * 1000))


@dataclass(slots=True)
class FetchState:
    leader_epoch: int
    truncating: bool = True
    retry_at: float = 0.0
    """Event-loop time before which this partition is not tried again (after an error)."""


class ReplicaFetcher:
    """Fetches every partition this broker follows from one leader."""

    def __init__(
        self,
        broker_id: int,
        leader_id: int,
        connection: PeerConnection,
        replicas: ReplicaManager,
        image: MetadataImage,
        emit: EventSink,
        spawn: Spawn,
        request_timeout_s: float,
    ) -> None:
        """``request_timeout_s``: ``request.timeout.ms``, how long an answer may take."""
        self.broker_id = broker_id
        self.leader_id = leader_id
        self.connection = connection
        self.request_timeout_s = request_timeout_s
        self.replicas = replicas
        self.image = image
        self.emit = emit
        self.partitions: dict[TopicPartition, FetchState] = {}
        self._changed = asyncio.Event()
        self._fetching = False
        """A Fetch is in flight (the leader may be holding it)."""
        self._answered = False
        """This round waited for an answer from the leader."""
        self._task = spawn(self._run(), f"replica-fetcher-{leader_id}")

    def set_partitions(self, wanted: dict[TopicPartition, int]) -> None:
        """``wanted`` maps each partition to the leader epoch it is followed in; a new
        partition or a new epoch starts with truncation, at once.

        A Fetch in flight is abandoned for it, with its connection. The leader holds an
        idle follower's Fetch up to ``replica.fetch.wait.max.ms`` and would not hear of the
        new partition from this follower before then (Kafka's fetcher threads do make it
        wait, up to 500 ms): it would drop the follower from the new partition's ISR after
        ``replica.lag.time.max.ms``. The connection goes too because the leader answers a
        connection's requests in order: the next Fetch would wait behind the held one."""
        for key in [k for k in self.partitions if k not in wanted]:
            del self.partitions[key]
        added = False
        for key, epoch in wanted.items():
            current = self.partitions.get(key)
            if current is None or current.leader_epoch != epoch:
                self.partitions[key] = FetchState(epoch)
                added = True
        if added:
            self._changed.set()
            if self._fetching:
                self.connection.reset()

    async def stop(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        await self.connection.close()

    def _config_ms(self, name: str) -> int:
        return self.image.broker_int(name)

    def _due(self, state: FetchState) -> bool:
        return asyncio.get_running_loop().time() >= state.retry_at

    def _back_off(self, state: FetchState) -> None:
        """Kafka's ``delayPartitions``: a failing partition must not spin the fetcher."""
        backoff_s = self._config_ms("replica.fetch.backoff.ms") / 1000
        state.retry_at = asyncio.get_running_loop().time() + backoff_s

    async def _run(self) -> None:
        while True:
            if not self.partitions:
                self._changed.clear()
                await self._changed.wait()
                continue
            # A round can finish without awaiting anything (nothing due, a partition sorted
            # out locally): give the loop its turn, or the metadata changes that would
            # update ``self.partitions`` could never run. A round that waited for the
            # leader's answer has given it: its next Fetch goes at once (a pass of the loop
            # here was a share of every acks=all Produce's wait for its followers).
            if not self._answered:
                await asyncio.sleep(0)
            self._answered = False
            self._changed.clear()
            try:
                progressed = await self._truncate()
                # a partition added meanwhile is truncated first, not after a held Fetch
                progressed = self._changed.is_set() or await self._fetch() or progressed
            except PeerTimeoutError as exc:
                # the connection is dropped with it (``PeerConnection``), as Kafka's
                # fetcher's is: the next Fetch goes on a new one
                log.info("fetch from broker %d: %s; reconnecting", self.leader_id, exc)
                progressed = self._changed.is_set()
            except PeerUnavailableError as exc:
                log.debug("fetch from broker %d failed: %s", self.leader_id, exc)
                progressed = self._changed.is_set()  # abandoned for a new partition
            if not progressed:
                await asyncio.sleep(self._config_ms("replica.fetch.backoff.ms") / 1000)

    def _local(self, key: TopicPartition, state: FetchState) -> Partition | None:
        """The local replica, if it still follows this leader in this epoch."""
        partition = self.replicas.partitions.get(key)
        if (
            partition is None
            or partition.leader != self.leader_id
            or partition.leader_epoch != state.leader_epoch
            or self.partitions.get(key) is not state
        ):
            return None
        return partition

    # ---- truncation ---------------------------------------------------------------------
    async def _truncate(self) -> bool:
        pending = {k: s for k, s in self.partitions.items() if s.truncating and self._due(s)}
        asks: dict[TopicPartition, tuple[FetchState, int]] = {}
        emptied = False
        for key, state in pending.items():
            partition = self._local(key, state)
            if partition is None:
                continue  # no longer followed here (deleted, new leader): the next sync drops it
            latest = partition.log.leader_epoch_cache.latest_epoch
            if latest < 0:
                state.truncating = False  # an empty log has nothing to cut
                emptied = True
            else:
                asks[key] = (state, latest)
        if not asks:
            return emptied
        by_topic: dict[str, list[Any]] = {}
        for (topic, index), (state, latest) in asks.items():
            by_topic.setdefault(topic, []).append(
                build(
                    epoch_req.OffsetForLeaderPartition,
                    {
                        "partition": index,
                        "current_leader_epoch": state.leader_epoch,
                        "leader_epoch": latest,
                    },
                )
            )
        request = build(
            epoch_req.OffsetForLeaderEpochRequest,
            {
                "replica_id": self.broker_id,
                "topics": tuple(
                    build(epoch_req.OffsetForLeaderTopic, {"topic": t, "partitions": tuple(ps)})
                    for t, ps in by_topic.items()
                ),
            },
        )
        response = await self.connection.request(request, self.request_timeout_s)
        self._answered = True
        done = False
        for t in response.topics:
            for p in t.partitions:
                key = (t.topic, int(p.partition))
                if key not in asks:
                    continue
                state, latest = asks[key]
                if p.error_code != ErrorCode.none:
                    self._back_off(state)
                    continue
                partition = self._local(key, state)
                if partition is None:
                    continue
                with self._partition_errors(key, state, partition):
                    self._apply_truncation(key, partition, latest, p)
                    state.truncating = False
                    done = True
        return done or emptied

    def _apply_truncation(
        self, key: TopicPartition, partition: Partition, latest: int, answer: Any
    ) -> None:
        cache = partition.log.leader_epoch_cache
        leo = partition.log_end_offset
        offset = truncation_offset(
            latest,
            int(answer.leader_epoch),
            int(answer.end_offset),
            leo,
            lambda epoch: cache.end_offset_for(epoch, leo)[1],
            partition.high_watermark,
        )
        start, end = partition.truncate_to(offset)
        if end > start:
            self.emit(
                EventType.LOG_TRUNCATED,
                topic=key[0],
                topic_id=self.image.topic_ids.get(key[0]),
                partition=key[1],
                from_offset=start,
                to_offset=end,
                removed=end - start,
                leader=self.leader_id,
                leader_epoch=partition.leader_epoch,
            )

    # ---- fetching -----------------------------------------------------------------------
    async def _fetch(self) -> bool:
        ready = {
            k: (s, p)
            for k, s in self.partitions.items()
            if not s.truncating and self._due(s) and (p := self._local(k, s)) is not None
        }
        if not ready:
            return False
        max_wait_ms = held_fetch_wait_ms(
            self._config_ms("replica.fetch.wait.max.ms"),
            (s.retry_at for s in self.partitions.values()),
            asyncio.get_running_loop().time(),
        )
        by_topic: dict[str, list[Any]] = {}
        for (topic, index), (state, partition) in ready.items():
            by_topic.setdefault(topic, []).append(
                build(
                    fetch_req.FetchPartition,
                    {
                        "partition": index,
                        "current_leader_epoch": state.leader_epoch,
                        "fetch_offset": partition.log_end_offset,
                        "last_fetched_epoch": partition.log.leader_epoch_cache.latest_epoch,
                        "log_start_offset": partition.log_start_offset,
                        "partition_max_bytes": PARTITION_MAX_BYTES,
                    },
                )
            )
        request = build(
            fetch_req.FetchRequest,
            {
                "cluster_id": None,
                "replica_id": self.broker_id,
                "max_wait": max_wait_ms,
                "min_bytes": 1,
                "max_bytes": FETCH_MAX_BYTES,
                "isolation_level": 0,
                "session_id": 0,
                "session_epoch": -1,
                "topics": tuple(
                    build(fetch_req.FetchTopic, {"topic": t, "partitions": tuple(ps)})
                    for t, ps in by_topic.items()
                ),
                "forgotten_topics_data": (),
                "rack_id": "",
            },
        )
        self._fetching = True
        try:
            response = await self.connection.request(
                request, max_wait_ms / 1000 + self.request_timeout_s, read=read_fetch_response
            )
        finally:
            self._fetching = False
        self._answered = True
        progressed = False
        for t in response.responses:
            for p in t.partitions:
                key = (t.topic, int(p.partition_index))
                if key not in ready:
                    continue
                state, _ = ready[key]
                local = self._local(key, state)
                if local is None:
                    continue
                with self._partition_errors(key, state, local):
                    if p.error_code == ErrorCode.none:
                        self._process_partition_data(key, local, p)
                        progressed = True
                    elif p.error_code == ErrorCode.offset_out_of_range:
                        progressed |= self._handle_out_of_range(key, state, local, p)
                    else:
                        self._back_off(state)
        return progressed

    @contextlib.contextmanager
    def _partition_errors(
        self, key: TopicPartition, state: FetchState, local: Partition
    ) -> Iterator[None]:
        """One partition's storage error is that partition's alone (Kafka's
        ``processFetchRequest``): logged with the partition, which backs off and is tried
        again, while the others in the same response go on. Left to propagate, it ended
        the round: every partition after it went unappended, round after round, and fell
        out of its ISR. A disk failure (``OSError``) is not caught: it halts the broker."""
        try:
            yield
        except StorageError as exc:
            log.warning(
                "replica fetcher from broker %d: %s-%d at offset %d: %s",
                self.leader_id,
                key[0],
                key[1],
                local.log_end_offset,
                exc,
            )
            self._back_off(state)

    def _process_partition_data(self, key: TopicPartition, local: Partition, answer: Any) -> None:
        """Append what the leader sent, then follow its high watermark and log start."""
        local.append_as_follower(answer.records or b"", int(answer.high_watermark))
        if local.follow_log_start_offset(int(answer.log_start_offset)):
            self.emit(
                EventType.LOG_START_ADVANCED,
                topic=key[0],
                partition=key[1],
                log_start_offset=local.log_start_offset,
                reason="leader",
                leader=self.leader_id,
            )

    def _handle_out_of_range(
        self, key: TopicPartition, state: FetchState, local: Partition, answer: Any
    ) -> bool:
        """Kafka's ``fetchOffsetAndTruncate``. Below the leader's log start, nothing this
        replica holds is still in the partition: empty the log and restart at the leader's
        log start. Otherwise it is ahead of the leader: truncate again (after a backoff).
        True when the partition can fetch again at once."""
        leader_log_start = int(answer.log_start_offset)
        if local.log_end_offset < leader_log_start:
            start, end = local.truncate_fully_and_start_at(leader_log_start)
            self.emit(
                EventType.LOG_START_ADVANCED,
                topic=key[0],
                partition=key[1],
                log_start_offset=leader_log_start,
                reason="leader",
                leader=self.leader_id,
                truncated_fully=True,
                removed=end - start,
            )
            return True
        state.truncating = True
        self._back_off(state)
        return False


class ReplicaFetcherManager:
    """Keeps one ``ReplicaFetcher`` per leader this broker follows a partition of."""

    def __init__(
        self,
        broker_id: int,
        replicas: ReplicaManager,
        image: MetadataImage,
        emit: EventSink,
        spawn: Spawn,
        request_timeout_ms: int,
        endpoint_overrides: str = "",
    ) -> None:
        """``request_timeout_ms``: ``request.timeout.ms`` (read at start-up);
        ``endpoint_overrides``: ``replica.fetch.endpoints`` (``id@host:port,...``)."""
        self.broker_id = broker_id
        self.request_timeout_s = request_timeout_ms / 1000
        self.replicas = replicas
        self.image = image
        self.emit = emit
        self.spawn = spawn
        self.endpoint_overrides = endpoint_overrides
        self.fetchers: dict[int, ReplicaFetcher] = {}
        self._sync_scheduled = False
        self._stopped = False
        """Once stopped, no fetcher starts again: a leadership change replayed after the
        stop (a controlled shutdown moves this broker's leaderships away, and their records
        arrive while it stops) once started one that wrote to a log already closed."""

    def endpoint(self, leader_id: int) -> tuple[str, int] | None:
        if self.endpoint_overrides:
            endpoints = parse_voters(self.endpoint_overrides)
            if leader_id in endpoints:
                return endpoints[leader_id].host, endpoints[leader_id].port
        registration = self.image.brokers.get(leader_id)
        return None if registration is None else (registration.host, registration.port)

    def schedule_sync(self) -> None:
        """Coalesce the partition changes of one metadata batch into one sync."""
        if not self._sync_scheduled:
            self._sync_scheduled = True
            asyncio.get_running_loop().call_soon(self._sync)

    def _sync(self) -> None:
        self._sync_scheduled = False
        if self._stopped:
            return
        wanted: dict[int, dict[TopicPartition, int]] = {}
        me = self.broker_id
        for key, partition in self.replicas.partitions.items():
            if partition.leader >= 0 and partition.leader != me:
                wanted.setdefault(partition.leader, {})[key] = partition.leader_epoch
        for leader_id, fetcher in self.fetchers.items():
            fetcher.set_partitions(wanted.get(leader_id, {}))
        for leader_id, partitions in wanted.items():
            if leader_id in self.fetchers:
                continue
            endpoint = self.endpoint(leader_id)
            if endpoint is None:
                continue
            connection = PeerConnection(*endpoint, f"kafkalite-replica-{me}")
            fetcher = ReplicaFetcher(
                me,
                leader_id,
                connection,
                self.replicas,
                self.image,
                self.emit,
                self.spawn,
                self.request_timeout_s,
            )
            fetcher.set_partitions(partitions)
            self.fetchers[leader_id] = fetcher

    async def stop(self) -> None:
        self._stopped = True
        for fetcher in list(self.fetchers.values()):
            await fetcher.stop()
        self.fetchers.clear()
