"""This broker's registration and session with the active controller (Kafka's
``BrokerLifecycleManager``).

Heartbeats run on the control plane (``control_plane``), so client work never delays
them: a broker that is merely busy keeps its session. One goes out every
``broker.heartbeat.interval.ms`` whether or not the previous one was answered, and one
goes out at once whenever this broker's metadata image has replayed something new: each
carries the offset replayed, and the controller answers an admin change once every live
broker has reported it.

The controller counts a heartbeat when it arrives, but answers it only after the
operations queued before it (each waits for its records to commit, seconds under CPU
starvation). So a slow answer must never hold up the next heartbeat: with a few
unanswered, the oldest is abandoned (it has already been counted, and a newer answer
says more) rather than the new one skipped. Skipping it had spaced arrivals by the
answer time, and a busy controller fenced live brokers whose heartbeats it was sitting on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Callable

from kafkalite.broker.control_plane.control_loop import ControlPlane
from kafkalite.broker.control_plane.controller_channel import ControllerChannel
from kafkalite.broker.control_plane_api import ControllerRequestError, NotControllerError
from kafkalite.protocol.errors import ErrorCode
from kafkalite.supervision import Spawn

log = logging.getLogger(__name__)

MAX_HEARTBEATS_IN_FLIGHT = 3


class BrokerLifecycle:
    """Registration (any loop) and the heartbeat loop (control loop only). Owns this
    broker's ``broker_epoch`` (-1 until registered)."""

    def __init__(
        self,
        broker_id: int,
        advertised: tuple[str, int],
        rack: str | None,
        controller: ControllerChannel,
        control_plane: ControlPlane,
        spawn: Spawn,
        applied_end_offset: Callable[[], int],
    ) -> None:
        """``applied_end_offset`` is how far this broker's metadata image has replayed the
        log (each heartbeat reports it)."""
        self.broker_id = broker_id
        self.broker_epoch = -1
        self._advertised = advertised
        self._rack = rack
        self._controller = controller
        self._control_plane = control_plane
        self._spawn = spawn
        self._applied_end_offset = applied_end_offset
        self._loop: asyncio.Task[None] | None = None
        self._due: asyncio.Event | None = None
        self._in_flight: dict[asyncio.Task[None], None] = {}
        """Unanswered heartbeats, oldest first."""
        self._registration: asyncio.Task[None] | None = None

    async def register(self) -> None:
        host, port = self._advertised
        self.broker_epoch = await self._controller.register_broker(
            self.broker_id, host, port, self._rack, str(uuid.uuid4())
        )

    def start(self) -> None:
        self._control_plane.loop.call_soon_threadsafe(self._start_loop)

    def _start_loop(self) -> None:
        self._loop = self._spawn(self._heartbeat_loop(), "heartbeat")

    async def stop(self) -> None:
        """Stop heartbeating (before the controlled shutdown asks to be fenced)."""
        await self._control_plane.run(self._stop_loop())

    async def _stop_loop(self) -> None:
        if self._loop is not None:
            self._loop.cancel()
            await asyncio.gather(self._loop, return_exceptions=True)

    def metadata_replayed(self) -> None:
        """The image replayed new records (called on the main loop): heartbeat now."""
        self._control_plane.loop.call_soon_threadsafe(self._wake)

    def _wake(self) -> None:
        if self._due is not None:
            self._due.set()

    def _interval_s(self) -> float:
        image = self._controller.service.image
        return image.broker_int("broker.heartbeat.interval.ms") / 1000

    async def _heartbeat_loop(self) -> None:
        self._due = asyncio.Event()
        try:
            while True:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self._interval_s()):
                        await self._due.wait()
                self._due.clear()
                if len(self._in_flight) >= MAX_HEARTBEATS_IN_FLIGHT:
                    oldest = next(iter(self._in_flight))
                    del self._in_flight[oldest]
                    oldest.cancel()
                task = asyncio.create_task(self._heartbeat())
                self._in_flight[task] = None
                task.add_done_callback(self._sent)
        finally:
            for task in self._in_flight:
                task.cancel()
            if self._registration is not None:
                self._registration.cancel()

    def _sent(self, task: asyncio.Task[None]) -> None:
        self._in_flight.pop(task, None)

    async def _heartbeat(self) -> None:
        interval = self._interval_s()
        sent_epoch = self.broker_epoch
        try:
            reply = await self._controller.heartbeat(
                self.broker_id,
                sent_epoch,
                self._applied_end_offset() - 1,
                timeout_s=max(3 * interval, 0.5),
            )
        except (NotControllerError, ControllerRequestError):
            return
        if reply.error == ErrorCode.stale_broker_epoch and (
            self._registration is None or self._registration.done()
        ):
            # a task of its own: abandoning this heartbeat must not abandon registering
            self._registration = asyncio.create_task(self._register_again(sent_epoch))

    async def _register_again(self, stale_epoch: int) -> None:
        if self.broker_epoch == stale_epoch:  # not re-registered meanwhile
            log.info("the controller does not know epoch %d: registering", stale_epoch)
            await self.register()

    async def shut_down(self) -> None:
        """Controlled shutdown: ask the controller to move this broker's leaderships and
        ISR places to others (``want_shut_down``) and wait for it to be committed (and,
        within a bound, replayed by the other brokers, so that none lists this one)."""
        with contextlib.suppress(NotControllerError, ControllerRequestError):
            await self._controller.heartbeat(
                self.broker_id,
                self.broker_epoch,
                self._applied_end_offset() - 1,
                want_shut_down=True,
                timeout_s=1.5,
            )
