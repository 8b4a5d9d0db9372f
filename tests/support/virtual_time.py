"""An event loop on virtual time, for unit tests of code that waits (sessions, timeouts,
periodic loops) without sockets.

Time moves only when nothing is ready to run, and then jumps straight to the next timer:
a 30-s timeout takes no real time, and how fast the machine runs (a loaded CI server)
changes nothing the test sees. A test makes one pass of the loop take long (a busy
callback, a starved process) with ``advance``. Run a scenario with ``run``.
"""

from __future__ import annotations

import asyncio
import selectors
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class _JumpingSelector(selectors.DefaultSelector):
    """Looks for I/O without waiting; where the loop would wait for its next timer, the
    loop's virtual clock jumps there instead."""

    def __init__(self, loop: VirtualTimeLoop) -> None:
        super().__init__()
        self._loop = loop

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is None:  # no timer at all: only I/O (another thread) can wake the loop
            return super().select(None)
        ready = super().select(0)
        if not ready:
            self._loop.advance(timeout)
        return ready


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    def __init__(self) -> None:
        self._now = 0.0
        super().__init__(_JumpingSelector(self))

    def time(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        """``seconds`` pass (called from a callback: that pass of the loop ran long)."""
        self._now += max(0.0, seconds)


def loop() -> VirtualTimeLoop:
    """The running virtual-time loop."""
    running = asyncio.get_running_loop()
    assert isinstance(running, VirtualTimeLoop), "run the scenario with virtual_time.run"
    return running


def run(scenario: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run`` on a virtual-time loop (which starts at time 0)."""
    with asyncio.Runner(loop_factory=VirtualTimeLoop) as runner:
        return runner.run(scenario)
