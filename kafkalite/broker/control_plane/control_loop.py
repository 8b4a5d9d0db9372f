"""The broker's control plane: the metadata quorum, the controller, the controller
listener and the broker's heartbeats, on an event loop of their own in a second thread.

Why a thread: on one event loop, client work (a burst of Produce, Metadata for hundreds
of partitions, six clients at once on a shared two-core machine) held up quorum Fetches
and heartbeats for seconds; the controller then fenced brokers that were merely busy
(a lone broker fenced itself), Metadata answered with no brokers, and the quorum changed
leaders over and over. Here the control plane waits in its own ``select``; when a
message arrives, Python's GIL hands it the interpreter within its switch interval
(5 ms) however busy the main loop is, and it needs little CPU. Kafka separates its
controller and heartbeat threads from request handling for the same reason.

What lives where:

- control loop: ``RaftQuorum``, the controller (``ControllerService`` on an image of its
  own), the connections of ``ControllerChannel``, the controller listener, heartbeats.
- main loop: everything that serves clients and replication, and the broker's
  ``MetadataImage``, replayed from the committed records the control plane hands over in
  commit order (``call_soon_threadsafe`` keeps their order; ``MetadataPublisher`` applies
  them under supervision).

Nothing mutable is shared: work crosses with ``run`` (main -> control) or
``call_soon_threadsafe`` (control -> main), and the few values read across (offsets,
the quorum's published view) are replaced whole, never changed in place.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from kafkalite.supervision import Spawn

T = TypeVar("T")
log = logging.getLogger(__name__)


class ControlPlane:
    """A thread running an asyncio loop until ``stop``; ``run`` awaits work on it from
    the main loop, ``run_on_main`` the other way round."""

    def __init__(self, name: str, spawn: Spawn) -> None:
        """``spawn`` starts long-lived tasks under supervision (on whichever loop)."""
        self.loop = asyncio.new_event_loop()
        self._spawn = spawn
        self._main: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)

    def start(self) -> None:
        """Start the thread; the caller's loop becomes the main loop."""
        self._main = asyncio.get_running_loop()
        self._thread.start()

    @property
    def main_loop(self) -> asyncio.AbstractEventLoop:
        if self._main is None:
            raise RuntimeError("the control plane has not been started")
        return self._main

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            pending = asyncio.all_tasks(self.loop)
            for task in pending:
                task.cancel()
            if pending:
                gathered = asyncio.gather(*pending, return_exceptions=True)
                with contextlib.suppress(Exception):
                    self.loop.run_until_complete(asyncio.wait({gathered}, timeout=0.5))
            self.loop.close()

    @property
    def on_control_loop(self) -> bool:
        """Whether the caller runs on the control plane's loop."""
        try:
            return asyncio.get_running_loop() is self.loop
        except RuntimeError:
            return False

    async def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` on the control loop; the caller awaits it from its own loop (and
        cancelling the caller cancels the work)."""
        if self.on_control_loop:
            return await work
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self.loop))

    async def run_on_main(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` on the main loop (what serves clients) and await it from here."""
        if asyncio.get_running_loop() is self.main_loop:
            return await work
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self.main_loop))

    def to_main(self, callback: Callable[..., None], *args: Any) -> None:
        """Call ``callback(*args)`` on the main loop, after everything handed over before."""
        self.main_loop.call_soon_threadsafe(callback, *args)

    def spawn(self, work: Coroutine[Any, Any, None], name: str) -> None:
        """Start ``work`` as a supervised long-lived task of the control loop (cancelled
        when the control plane stops)."""
        self.loop.call_soon_threadsafe(self._spawn, work, name)

    async def stop(self, timeout_s: float = 1.0) -> None:
        """Stop the loop (its remaining tasks are cancelled) and wait for the thread."""
        if not self._thread.is_alive():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        deadline = time.monotonic() + timeout_s
        while self._thread.is_alive() and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        if self._thread.is_alive():
            log.warning("the control plane did not stop within %.1f s", timeout_s)
