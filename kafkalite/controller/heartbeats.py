"""Which brokers are alive, as the active controller sees it: when it last heard from
each broker, and the metadata offset the broker's last heartbeat said it had replayed
(Kafka's ``BrokerHeartbeatManager``).

A broker is found dead in one of two ways:

- **its process is gone**: the operating system closes a killed process's connections, and
  the controller fences the broker as soon as it sees its connection close (in
  ``broker.control_plane.controller_service``, not here: no clock is involved);
- **it is silent** (paused, cut off by the network, hung): the controller fences a broker
  it has heard nothing from (a heartbeat, or a request of its metadata-quorum voter) for
  ``broker.session.timeout.ms``. Silence is measured on the controller's own responsive
  clock (``raft.clock``), which skips the time the controller itself was stalled: a
  broker is never blamed for a silence the controller could not have heard.

The session is fixed, long enough that a broker starved of CPU with every core busy is
not taken for a dead one (``test_starvation``); the fast path for a crash is the closed
connection, not a short session.

Kept in memory only, as in Kafka: a new controller starts every broker's session afresh
instead of fencing brokers it has simply not heard from yet. Pure; the caller passes the
time.
"""

from __future__ import annotations

from collections.abc import Iterable


class BrokerHeartbeats:
    def __init__(self, session_timeout_ms: int) -> None:
        self.session_timeout_ms = session_timeout_ms
        self._last_contact_ms: dict[int, int] = {}
        self._replayed_offset: dict[int, int] = {}
        self.longest_silence_ms = 0
        """The longest silence a contact ended within its session since ``reset``: how
        close a live broker came to being fenced (``/state``, ``bench.starvation``)."""

    def reset(self, broker_ids: Iterable[int], now_ms: int) -> None:
        """A controller taking over: every broker's session starts now."""
        self._last_contact_ms = dict.fromkeys(broker_ids, now_ms)
        self._replayed_offset = {}
        self.longest_silence_ms = 0

    def touch(self, broker_id: int, now_ms: int, replayed_offset: int | None = None) -> None:
        """A contact arrived (a registration, a heartbeat, a quorum request);
        ``replayed_offset`` (heartbeats) is the last metadata offset the broker says its
        image has replayed."""
        last = self._last_contact_ms.get(broker_id)
        if last is not None:
            silence = now_ms - last
            if silence <= self.session_timeout_ms:  # a live broker's: a margin
                self.longest_silence_ms = max(self.longest_silence_ms, silence)
        self._last_contact_ms[broker_id] = max(now_ms, last or now_ms)
        if replayed_offset is not None:
            self._replayed_offset[broker_id] = replayed_offset

    def silent_ms(self, broker_id: int, now_ms: int) -> int:
        """How long since the broker's last contact (0 if none is known)."""
        return max(0, now_ms - self._last_contact_ms.get(broker_id, now_ms))

    def silences_ms(self, broker_ids: Iterable[int], now_ms: int) -> dict[int, int]:
        """Each broker's silence."""
        return {b: self.silent_ms(b, now_ms) for b in broker_ids}

    def expired(self, unfenced: Iterable[int], now_ms: int, own_id: int | None = None) -> list[int]:
        """The unfenced brokers silent for longer than the session. Never ``own_id``, the
        broker in the controller's own process: while the controller runs, so does it."""
        return sorted(b for b in unfenced if b != own_id and self._expiry_ms(b, now_ms) < now_ms)

    def next_expiry_ms(
        self, unfenced: Iterable[int], now_ms: int, own_id: int | None = None
    ) -> int:
        """When the first unfenced broker's session runs out if nothing arrives (``now_ms``
        plus a session when there is none to watch); ``own_id`` is left out, as in
        ``expired``."""
        expiries = [self._expiry_ms(b, now_ms) for b in unfenced if b != own_id]
        return min(expiries, default=now_ms + self.session_timeout_ms)

    def _expiry_ms(self, broker_id: int, now_ms: int) -> int:
        return self._last_contact_ms.setdefault(broker_id, now_ms) + self.session_timeout_ms

    def behind(self, live: Iterable[int], offset: int) -> list[int]:
        """The live brokers that have not yet reported replaying ``offset``."""
        return sorted(b for b in live if self._replayed_offset.get(b, -1) < offset)
