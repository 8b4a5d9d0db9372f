"""The active controller's quorum, as ``ControllerService`` sees it, with no network: it
appends to a list and commits when the test says so (``commit``), handing committed
records to the controller's images as ``RaftQuorum`` does."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from kafkalite.broker.control_plane.controller_service import ControllerService
from kafkalite.broker.control_plane_api import NotControllerError, QuorumView
from kafkalite.controller.controller_image import ControllerImage
from kafkalite.metadata.records import MetadataRecord


class FakeQuorum:
    node_id = leader_id = 1

    def __init__(self, images: ControllerImage) -> None:
        self.images = images
        self.is_active = True
        self.view = QuorumView()
        self.entries: list[list[MetadataRecord]] = []
        self.committed_end = 0
        """Entries below this offset are committed."""
        self.activation_listeners: list[Callable[[bool], None]] = []
        self.request_listeners: list[Any] = []
        self._waiters: list[tuple[int, asyncio.Future[None]]] = []

    @property
    def appended(self) -> list[MetadataRecord]:
        return [record for entry in self.entries for record in entry]

    @property
    def log_end_offset(self) -> int:
        return len(self.entries)

    def on_activation(self, listener: Callable[[bool], None]) -> None:
        self.activation_listeners.append(listener)

    def on_request_from(self, listener: Any) -> None:
        self.request_listeners.append(listener)

    def append(self, records: list[MetadataRecord]) -> int:
        if not self.is_active:
            raise NotControllerError(-1)
        self.entries.append(records)
        return len(self.entries) - 1

    async def committed(self, offset: int) -> None:
        if offset < self.committed_end:
            return
        if not self.is_active:
            raise NotControllerError(-1)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((offset, future))
        await future

    def commit(self, end: int | None = None) -> None:
        """Commit every entry below ``end`` (all appended so far by default)."""
        end = len(self.entries) if end is None else end
        for offset in range(self.committed_end, end):
            self.images.replay_committed(offset, list(self.entries[offset]))
        self.committed_end = max(self.committed_end, end)
        waiting = []
        for offset, future in self._waiters:
            if offset < self.committed_end:
                if not future.done():
                    future.set_result(None)
            else:
                waiting.append((offset, future))
        self._waiters = waiting

    def lose_leadership(self, keep: int) -> None:
        """Another voter leads now, and its log keeps only the entries below ``keep``."""
        self.is_active = False
        for _, future in self._waiters:
            if not future.done():
                future.set_exception(NotControllerError(2))
        self._waiters = []
        del self.entries[keep:]
        for listener in self.activation_listeners:
            listener(False)


def service_with_brokers(
    now: list[int], brokers: int = 3, emitted: list[tuple[Any, dict[str, Any]]] | None = None
) -> tuple[ControllerService, FakeQuorum]:
    """An active controller of ``brokers`` registered brokers (committed), with a clock the
    test moves (``now``); its background loops are not started."""
    images = ControllerImage()
    quorum = FakeQuorum(images)
    events = emitted if emitted is not None else []
    service = ControllerService(
        quorum,  # type: ignore[arg-type]
        images,
        lambda: now[0],
        lambda coro, name: coro.close(),  # type: ignore[arg-type,return-value]
        lambda event_type, **fields: events.append((event_type, fields)),
    )
    for broker in range(1, brokers + 1):
        offset = quorum.log_end_offset
        registration = service.controller.register_broker(
            broker, "h", 9000 + broker, None, "x", offset
        )
        quorum.append(registration.records)
        quorum.commit()
    service.heartbeats.reset(range(1, brokers + 1), now[0])
    return service, quorum
