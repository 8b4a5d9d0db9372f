"""Which brokers are alive, as the active controller sees it: the time of each broker's
last heartbeat, and the metadata offset that heartbeat said the broker had replayed.

Kept in memory only, as Kafka's ``BrokerHeartbeatManager`` is: a new controller starts
every broker's clock afresh instead of fencing brokers it has simply not heard from yet.
Pure; the caller passes the time.

Two rules keep a busy broker from being taken for a dead one:

- time the controller itself was stalled (its loop ran late, its process was paused)
  does not count against anyone: ``forgive`` moves every clock forward by the stall, since
  heartbeats that arrived meanwhile could not have been read;
- the controller never fences its own broker for silence (``expired``'s ``own_id``): if
  the controller runs, the broker in its process does too.
"""

from __future__ import annotations

from collections.abc import Iterable


class BrokerHeartbeats:
    def __init__(self, session_timeout_ms: int) -> None:
        self.session_timeout_ms = session_timeout_ms
        self._last_contact_ms: dict[int, int] = {}
        self._replayed_offset: dict[int, int] = {}

    def reset(self, broker_ids: Iterable[int], now_ms: int) -> None:
        """A controller taking over gives every broker a full session to check in."""
        self._last_contact_ms = dict.fromkeys(broker_ids, now_ms)
        self._replayed_offset = {}

    def touch(self, broker_id: int, now_ms: int, replayed_offset: int | None = None) -> None:
        """A heartbeat (or registration) arrived; ``replayed_offset`` is the last metadata
        offset the broker says its image has replayed."""
        self._last_contact_ms[broker_id] = max(now_ms, self._last_contact_ms.get(broker_id, 0))
        if replayed_offset is not None:
            self._replayed_offset[broker_id] = replayed_offset

    def forgive(self, stalled_ms: int, now_ms: int) -> None:
        """This controller could not read heartbeats for ``stalled_ms``: that time counts
        against no broker."""
        for broker_id, last in self._last_contact_ms.items():
            self._last_contact_ms[broker_id] = min(last + stalled_ms, now_ms)

    def expired(self, unfenced: Iterable[int], now_ms: int, own_id: int | None = None) -> list[int]:
        """The unfenced brokers silent for longer than the session timeout (never
        ``own_id``, the broker in the controller's own process)."""
        deadline = now_ms - self.session_timeout_ms
        return sorted(
            b
            for b in unfenced
            if b != own_id and self._last_contact_ms.setdefault(b, now_ms) < deadline
        )

    def next_expiry_ms(self, unfenced: Iterable[int], now_ms: int) -> int:
        """When the first unfenced broker's session runs out if nothing arrives (``now_ms``
        plus a session when there is none to watch)."""
        lasts = [self._last_contact_ms.setdefault(b, now_ms) for b in unfenced]
        return min(lasts, default=now_ms) + self.session_timeout_ms

    def behind(self, live: Iterable[int], offset: int) -> list[int]:
        """The live brokers that have not yet reported replaying ``offset``."""
        return sorted(b for b in live if self._replayed_offset.get(b, -1) < offset)
