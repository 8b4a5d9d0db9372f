"""Long-lived tasks that cannot die quietly.

A broker runs a handful of tasks for its whole life: the Raft driver that applies metadata,
one replica fetcher per leader, the ISR checks, the controller's fencing loop, the group
and transaction coordinators' timers, retention and heartbeats. In asyncio, a task that
raises just ends, and its exception is at most printed when the task is garbage collected:
the broker would go on answering clients without, say, replicating anything. That zombie
is worse than a dead broker, which the cluster notices and fails over from.

So every such task is started through :class:`TaskSupervisor`. An exception that ends one
(anything but its cancellation) is logged with its traceback and handed to ``on_death``,
which for a broker process halts it (Kafka's process-terminating fault handler): the lab's
supervisor then shows the broker dead and its log says which task failed and why. A task
that returns normally has finished its job (a controller loop that lost leadership).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

log = logging.getLogger(__name__)

DeathHandler = Callable[[str, BaseException], None]


class Spawn(Protocol):
    """Start a long-lived task under supervision (``TaskSupervisor.spawn``)."""

    def __call__(self, coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]: ...


class TaskSupervisor:
    """Starts long-lived tasks and reports the first that dies of an exception."""

    def __init__(self, on_death: DeathHandler) -> None:
        self.on_death = on_death

    def spawn(self, coro: Coroutine[Any, Any, None], name: str) -> asyncio.Task[None]:
        task = asyncio.create_task(coro, name=name)
        task.add_done_callback(self._check)
        return task

    def _check(self, task: asyncio.Task[None]) -> None:
        if task.cancelled():
            return
        exc = task.exception()
        if exc is None:
            return
        log.critical("task %r died", task.get_name(), exc_info=exc)
        self.on_death(task.get_name(), exc)
