"""How a lab waits: poll a condition, at most so long, then say for what it waited.

A notebook cell that waits for a leader or an ISR must end, so that a cell written wrong
raises a clear error instead of hanging the kernel.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

WAIT_S = 30.0


class LabTimeoutError(TimeoutError):
    """A lab helper waited as long as it may; the message says for what."""


def wait_for(condition: Callable[[], T | None], timeout_s: float = WAIT_S, what: str = "it") -> T:
    """Poll ``condition`` until it returns something truthy, at most ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise LabTimeoutError(f"waited {timeout_s:.0f} s for {what}")
        time.sleep(0.1)
