"""The introspection endpoint: what Kafka hides, as JSON over plain HTTP.

``GET /state`` returns every replica this broker hosts (log start/end offset, high
watermark, last stable offset, leader epoch, ISR, producer states, open and recently
aborted transactions), the transactions and consumer groups this broker coordinates
(``group_views``), how late its event loop
runs (``loop_lag_ms``: busy is not dead) and what Python's garbage collector costs it
(``gc``, see ``gc_pauses``); on the active controller, the session it fences silent
brokers by and how long each broker has been silent (``controller_view``); ``GET
/events?since=N`` returns the event stream after sequence N. It is read-only and
separate from the Kafka listener, so a dashboard polling it never competes with clients
for the Kafka protocol, and the supervisor can tell a hung broker from a slow one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from kafkalite.broker.control_plane.controller_service import ControllerService
from kafkalite.broker.control_plane_api import QuorumView
from kafkalite.broker.events import EventLog
from kafkalite.coordinator.group.group_views import group_views
from kafkalite.coordinator.transaction.coordinator import TransactionCoordinator

if TYPE_CHECKING:
    from kafkalite.broker.broker import Broker

log = logging.getLogger(__name__)
RECENT_ABORTED = 100
STATE_EVENTS = 100
"""How many of the newest events ``/state`` carries (``/events?since=N`` has the rest)."""


def broker_state(broker: Broker, gc_state: dict[str, Any]) -> dict[str, Any]:
    """``gc_state``: what the garbage collector costs this process (``gc_pauses``)."""
    partitions = []
    for (topic, index), p in sorted(broker.replica_manager.partitions.items()):
        registration = broker.image.partition(topic, index)
        partitions.append(
            {
                "topic": topic,
                # which topic of that name: one deleted and created again is another
                "topic_id": broker.image.topic_ids.get(topic),
                "partition": index,
                "leader": p.leader,
                "leader_epoch": p.leader_epoch,
                "partition_epoch": p.partition_epoch,
                "isr": list(p.isr),
                "replicas": list(p.replicas),
                # a reassignment under way: who is joining, who will leave
                "adding_replicas": list(registration.adding_replicas) if registration else [],
                "removing_replicas": list(registration.removing_replicas) if registration else [],
                "log_start_offset": p.log_start_offset,
                "log_end_offset": p.log_end_offset,
                "high_watermark": p.high_watermark,
                "last_stable_offset": p.last_stable_offset,
                "followers": [
                    {
                        "broker": f.broker_id,
                        "log_end_offset": f.log_end_offset,
                        "lag": p.log_end_offset - f.log_end_offset
                        if f.log_end_offset >= 0
                        else None,
                        "last_caught_up_time_ms": f.last_caught_up_time_ms,
                        # its Fetch waits here for news (replica.fetch.wait.max.ms)
                        "fetch_waiting": f.fetch_held_until_ms >= 0,
                        "in_isr": f.broker_id in p.isr,
                    }
                    for f in p.followers.values()
                ],
                "producers": p.log.producer_state.describe(),
                "open_transactions": [
                    {
                        "producer_id": t.producer_id,
                        "producer_epoch": t.producer_epoch,
                        "first_offset": t.first_offset,
                    }
                    for t in p.log.producer_state.ongoing_transactions()
                ],
                "aborted_transactions": [
                    {
                        "producer_id": t.producer_id,
                        "first_offset": t.first_offset,
                        "last_offset": t.last_offset,
                    }
                    for t in p.log.recent_aborted_transactions(RECENT_ABORTED)
                ],
            }
        )
    return {
        "broker_id": broker.broker_id,
        "address": f"{broker.config.host}:{broker.config.port}",
        "controller": broker.quorum.view.is_active,
        "quorum": quorum_state(broker.quorum.view, broker.applied_end_offset),
        "state": "running",
        "cluster_id": broker.cluster_id,
        "broker_epoch": broker.broker_epoch,
        "metadata_offset": broker.image.offset,
        "loop_lag_ms": broker.loop_lag.lag_ms(),
        **controller_view(broker.controller.service),
        "gc": gc_state,
        "partitions": partitions,
        "transactions": coordinated_transactions(broker.txn_coordinator, broker.broker_id),
        "groups": group_views(broker.group_coordinator, broker.broker_id),
        "events": broker.events.last(STATE_EVENTS),
    }


def controller_view(service: ControllerService) -> dict[str, Any]:
    """What the active controller judges liveness by (null elsewhere): the session
    (``broker.session.timeout.ms``), each registered broker's silence (ms since the
    controller last heard from it), and the longest silence a live broker ended within its
    session since this controller became active (how close one came to being fenced)."""
    silences = service.silences_ms
    return {
        "broker_session_timeout_ms": service.session_ms,
        "broker_silence_ms": None
        if silences is None
        else {str(b): ms for b, ms in silences.items()},
        "longest_broker_silence_ms": service.longest_silence_ms,
    }


def coordinated_transactions(
    coordinator: TransactionCoordinator, broker_id: int
) -> list[dict[str, Any]]:
    """The transactional ids this broker coordinates now, with their state."""
    return [
        {
            "transactional_id": md.transactional_id,
            "producer_id": md.producer_id,
            "producer_epoch": md.producer_epoch,
            "state": md.state.state_name,
            "partitions": [f"{t}-{p}" for t, p in sorted(md.topic_partitions)],
            "timeout_ms": md.txn_timeout_ms,
            "start_time_ms": md.txn_start_timestamp,
            "coordinator": broker_id,
            "coordinator_epoch": coordinator.coordinator_epoch(md.transactional_id),
            "pending_markers": [
                f"{t}-{p}"
                for t, p in sorted(coordinator.pending_markers.get(md.transactional_id, ()))
            ],
        }
        for md in sorted(coordinator.transactions.values(), key=lambda m: m.transactional_id)
        if md.producer_epoch >= 0
    ]


def quorum_state(quorum: QuorumView, applied_end_offset: int) -> dict[str, Any]:
    """This voter's view of the metadata quorum; ``voters`` only on the leader."""
    info = quorum.info
    return {
        "leader": quorum.leader_id,
        "epoch": quorum.epoch,
        "high_watermark": quorum.high_watermark,
        "log_end_offset": quorum.log_end_offset,
        "applied_offset": applied_end_offset,
        "voters": None
        if info is None
        else [
            {
                "id": v.replica_id,
                "log_end_offset": v.log_end_offset,
                "last_fetch_timestamp": v.last_fetch_timestamp,
                "last_caught_up_timestamp": v.last_caught_up_timestamp,
            }
            for v in info.current_voters
        ],
    }


class IntrospectionServer:
    """Serves ``state()`` (``broker_state`` of this broker: the one reader of the whole
    broker, as a snapshot is) and the event log."""

    def __init__(self, state: Callable[[], dict[str, Any]], events: EventLog) -> None:
        self._state = state
        self._events = events
        self._server: asyncio.Server | None = None

    async def start(self, host: str, port: int) -> None:
        self._server = await asyncio.start_server(self._serve, host, port, reuse_address=True)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(5):
                request_line = await reader.readline()
                while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                    pass
            status, body = self._route(request_line.decode("latin-1"))
            payload = json.dumps(body).encode()
            writer.write(
                f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n".encode()
                + payload
            )
            await writer.drain()
        except (TimeoutError, ConnectionError, UnicodeDecodeError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def _route(self, request_line: str) -> tuple[str, Any]:
        parts = request_line.split()
        if len(parts) < 2 or parts[0] != "GET":
            return "405 Method Not Allowed", {"error": "only GET is served"}
        url = urlsplit(parts[1])
        if url.path == "/state":
            return "200 OK", self._state()
        if url.path == "/events":
            since = int(parse_qs(url.query).get("since", ["0"])[0] or 0)
            events = self._events
            return "200 OK", {"events": events.since(since), "started_ms": events.started_ms}
        return "404 Not Found", {"error": f"no such path {url.path}"}
