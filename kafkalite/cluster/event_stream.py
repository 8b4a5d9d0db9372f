"""Follow every broker's event stream without reading any event twice.

Each broker numbers its events from 1 in every process, so one ``since`` for the whole
cluster (``Cluster.events``) cannot follow them live: an ``EventStream`` keeps a cursor
per broker, starts it again when the broker's ``started_ms`` changes (it restarted), and
asks only the brokers that can answer (a paused broker would hold every poll until the
timeout), all at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from kafkalite.cluster.backend import BrokerState
from kafkalite.cluster.introspection_http import fetch_json
from kafkalite.cluster.spec import ClusterSpec

ANSWERING = (BrokerState.RUNNING, BrokerState.ISOLATED)


@dataclass
class _Cursor:
    started_ms: int | None = None
    seq: int = 0


class EventStream:
    """``poll()`` returns the events that appeared since the previous ``poll()``, oldest
    first. The first poll returns what each broker still buffers (its recent history)."""

    def __init__(self, spec: ClusterSpec, timeout_s: float = 1.0) -> None:
        self.spec = spec
        self.timeout_s = timeout_s
        self._cursors = {b.broker_id: _Cursor() for b in spec.brokers}

    def poll(self, states: Mapping[int, BrokerState]) -> list[dict[str, Any]]:
        asked = [b for b in self.spec.brokers if states.get(b.broker_id) in ANSWERING]
        if not asked:
            return []
        with ThreadPoolExecutor(max_workers=len(asked)) as pool:
            found = list(pool.map(self._poll_one, [b.broker_id for b in asked]))
        events = [e for batch in found for e in batch]
        return sorted(events, key=lambda e: (e["time_ms"], e["broker"], e["seq"]))

    def _poll_one(self, broker_id: int) -> list[dict[str, Any]]:
        broker = self.spec.broker(broker_id)
        cursor = self._cursors.setdefault(broker_id, _Cursor())
        answer = self._fetch(broker.host, broker.admin_port, cursor.seq)
        if answer is None:
            return []
        if answer.get("started_ms") != cursor.started_ms and cursor.seq > 0:
            # a new process: its numbering started again, so the cursor means nothing there
            answer = self._fetch(broker.host, broker.admin_port, 0)
            if answer is None:
                return []
        cursor.started_ms = answer.get("started_ms")
        events: list[dict[str, Any]] = answer["events"]
        if events:
            cursor.seq = events[-1]["seq"]
        return events

    def _fetch(self, host: str, port: int, since: int) -> dict[str, Any] | None:
        answer: dict[str, Any] | None = fetch_json(
            host, port, f"/events?since={since}", self.timeout_s
        )
        return answer
