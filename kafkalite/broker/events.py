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
from typing import Any

from kafkalite.events import EventType

log = logging.getLogger("kafkalite.events")


class EventLog:
    """Thread-safe: the broker's main loop and its control plane both emit."""

    def __init__(self, broker_id: int, now_ms: Callable[[], int], capacity: int = 10_000) -> None:
        self.broker_id = broker_id
        self.now_ms = now_ms
        self._events: deque[dict[str, Any]] = deque(maxlen=capacity)
        self._seq = 0
        self._lock = threading.Lock()
        self.started_ms = now_ms()
        """When this log (so this broker process) started: sequence numbers restart at 1
        with every process, so a reader following ``seq`` tells a restart by this."""
        self.replaying = False
        """While a starting broker replays the metadata log, what it emits is history being
        re-applied, not news: such events carry ``"replay": true``."""

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
            if self.replaying:
                event["replay"] = True
            self._events.append(event)
        log.info("%s %s", event_type.value, fields)

    def since(self, seq: int) -> list[dict[str, Any]]:
        with self._lock:
            return [e for e in self._events if e["seq"] > seq]
