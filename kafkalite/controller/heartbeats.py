"""Which brokers are alive, as the active controller sees it: the time of each broker's
last heartbeat. Kept in memory only, as Kafka's ``BrokerHeartbeatManager`` is: a new
controller starts every broker's clock afresh instead of fencing brokers it has simply not
heard from yet. Pure; the caller passes the time.
"""

from __future__ import annotations

from collections.abc import Iterable


class BrokerHeartbeats:
    def __init__(self, session_timeout_ms: int) -> None:
        self.session_timeout_ms = session_timeout_ms
        self._last_contact_ms: dict[int, int] = {}

    def reset(self, broker_ids: Iterable[int], now_ms: int) -> None:
        """A controller taking over gives every broker a full session to check in."""
        self._last_contact_ms = dict.fromkeys(broker_ids, now_ms)

    def touch(self, broker_id: int, now_ms: int) -> None:
        self._last_contact_ms[broker_id] = now_ms

    def expired(self, unfenced: Iterable[int], now_ms: int) -> list[int]:
        """The unfenced brokers silent for longer than the session timeout."""
        deadline = now_ms - self.session_timeout_ms
        return sorted(b for b in unfenced if self._last_contact_ms.setdefault(b, now_ms) < deadline)
