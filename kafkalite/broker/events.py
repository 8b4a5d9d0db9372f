"""The broker's event stream: what happened, in order, for students to watch.

Elections, ISR changes, truncations, suppressed duplicates, fenced requests, topics
created: each becomes one JSON-ready event with a sequence number, kept in a bounded ring
so a dashboard can poll ``/events?since=N`` and never miss what is still buffered. The
event types and what they mean are cataloged in :mod:`kafkalite.events`.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from itertools import islice
from typing import Any

from kafkalite.events import EventType

log = logging.getLogger("kafkalite.events")


def _never() -> bool:
    return False


class EventLog:
    """Thread-safe: the broker's main loop and its control plane both emit."""

    def __init__(
        self,
        broker_id: int,
        now_ms: Callable[[], int],
        capacity: int = 10_000,
        replaying: Callable[[], bool] = _never,
    ) -> None:
        self.broker_id = broker_id
        self.now_ms = now_ms
        self._replaying = replaying
        """Whether the broker is replaying the metadata log at start-up (its
        ``BrokerState``): what it emits then is history being re-applied, not news, and
        carries ``"replay": true``."""
        self._events: deque[dict[str, Any]] = deque(maxlen=capacity)
        self._seq = 0
        self._lock = threading.Lock()
        self.started_ms = now_ms()
        """When this log (so this broker process) started: sequence numbers restart at 1
        with every process, so a reader following ``seq`` tells a restart by this."""

    def emit(self, event_type: EventType, /, **fields: Any) -> None:
        with self._lock:
            self._seq += 1
            event = {
                "seq": self._seq,
                "time_ms": self.now_ms(),
                "broker": self.broker_id,
                "type": event_type.value,
                **fields,
            }
            if self._replaying():
                event["replay"] = True
            self._events.append(event)
        log.info("%s %s", event_type.value, fields)

    def since(self, seq: int) -> list[dict[str, Any]]:
        """The events after ``seq`` still in the ring, oldest first. Sequence numbers are
        consecutive, so they are the ring's last ``self._seq - seq``: read from its end,
        not by walking the whole ring on every poll."""
        with self._lock:
            return self._last(self._seq - max(seq, 0))

    def last(self, count: int) -> list[dict[str, Any]]:
        """The newest ``count`` events, oldest first (``/state`` shows the last 100)."""
        with self._lock:
            return self._last(count)

    def _last(self, count: int) -> list[dict[str, Any]]:
        newest_first = list(islice(reversed(self._events), max(count, 0)))
        newest_first.reverse()
        return newest_first
