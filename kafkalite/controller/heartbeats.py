"""Which brokers are alive, as the active controller sees it: the time of each broker's
last heartbeat, and the metadata offset that heartbeat said the broker had replayed.

Kept in memory only, as Kafka's ``BrokerHeartbeatManager`` is: a new controller starts
every broker's clock afresh instead of fencing brokers it has simply not heard from yet.
Pure; the caller passes the time.

Five rules keep a busy broker from being taken for a dead one:

- time the controller itself was stalled (its loop ran late, its process was paused)
  does not count against anyone: ``forgive`` moves every clock forward by the stall, since
  heartbeats that arrived meanwhile could not have been read;
- the controller never fences its own broker for silence (``expired``'s ``own_id``): if
  the controller runs, the broker in its process does too;
- the session stretches on a machine too busy to keep time: a broker whose quorum Fetch
  comes every 500 ms goes silent for much longer when its threads wait for a CPU (a course
  server shared by a class, a 2-core laptop running the whole lab), and so do the others.
  The gap between two contacts of one periodic kind (``Contact``: heartbeats every
  ``broker.heartbeat.interval.ms``, quorum Fetches every ``fetch_max_wait_ms`` or sooner)
  beyond that kind's interval is *lateness*; silence is judged against
  ``broker.session.timeout.ms`` plus ``SESSION_STRETCH`` times the largest lateness in
  the last ``GAP_WINDOW_MS`` (at most ``MAX_SESSION_TIMEOUT_MS``, Kafka's own default).
  Each kind is timed on its own: timed together, the two fill each other's gaps, and a
  starved machine showed almost no lateness until one silence of a live broker ran past
  the bare session. A gap longer than the session it was
  judged by does not count: a paused or cut-off broker was fenced, not slow, and its
  return stretches nothing. On a quiet machine contacts come within their intervals
  and a silent broker is fenced after
  ``broker.session.timeout.ms``: stretching by the gaps themselves, not by their
  lateness, gave 3 x 400 ms there, half a second more on every failover. This is
  the idea of an accrual failure detector (Hayashibara et al.; Cassandra, Akka): judge
  silence by the delays actually seen, not by a constant picked for a quiet machine.
  Kafka keeps a fixed 9 s instead, long enough for most machines and too long for a lab.
- a new controller gives each broker two sessions for its first contact, not one: a
  broker reaches the new controller only once the election has reached it, and the
  broker most likely to be late is the one that just lost the controller's seat for
  being too slow to answer. Under CPU starvation (``test_starvation.py``) the quorum
  changed leaders several times a minute and a deposed leader reached its successor up
  to 0.7 s after the election, while a new controller, with no lateness seen yet, judges
  by the bare 800 ms session. A voter the quorum found gone (its connection refused or
  reset: killed or stopped) gets the one session, so killing the controller fails its
  partitions over no later.
- the session also stretches by how crowded the machine's CPUs are, known before any
  contact comes late: with more than ``CROWDED_PER_CPU`` runnable tasks per CPU
  (``broker.run_queue``), the session grows in proportion. Lateness is learnt only once
  a late contact arrives; when a class starts its notebooks at once, the first silence
  of a starved broker came first, and a live broker was fenced after 1.2 s by a
  session that had stretched to 1175 ms.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from enum import Enum

from kafkalite.windowed_max import WindowedMax

SESSION_STRETCH = 3
"""The session grows by this many times the longest recent lateness of a contact."""
GAP_WINDOW_MS = 60_000
"""How long a late contact keeps the session stretched."""
CROWDED_PER_CPU = 2.0
"""Runnable tasks per CPU a machine takes in its stride: up to this many, the scheduler's
time slices keep each task's wait for a CPU within tens of ms; beyond it, a task gets
less than half a CPU, and its work, heartbeats included, slows in proportion."""
MAX_SESSION_TIMEOUT_MS = 9_000
"""The most a session stretches: Kafka's default ``broker.session.timeout.ms``."""


class Contact(Enum):
    """What reached the controller from a broker. Each kind that comes periodically is
    timed against its own period: mixed into one stream, a broker's heartbeats and quorum
    Fetches fill each other's gaps, and a machine starved enough to delay both showed no
    lateness at all until one silence ran past the bare session."""

    HEARTBEAT = "heartbeat"
    """Every ``broker.heartbeat.interval.ms``, and at once when the broker has news."""
    QUORUM_FETCH = "quorum_fetch"
    """Its voter's Fetch, held at most ``controller.quorum.fetch.max.wait.ms``."""
    QUORUM_VOTE = "quorum_vote"
    """A vote or pre-vote request: proof of life, with no period to be late by."""


class BrokerHeartbeats:
    def __init__(self, session_timeout_ms: int, intervals_ms: Mapping[Contact, int]) -> None:
        self.session_timeout_ms = session_timeout_ms
        self.intervals_ms = dict(intervals_ms)
        """The longest a live broker goes between two contacts of each periodic kind on a
        quiet machine; a longer gap is lateness."""
        self._last_contact_ms: dict[int, int] = {}
        self._last_of_kind_ms: dict[tuple[int, Contact], int] = {}
        """The last contact of each periodic kind in the broker's current session (the
        next one of that kind ends a gap)."""
        self._replayed_offset: dict[int, int] = {}
        self._awaiting_first_contact: set[int] = set()
        """Brokers a new controller has not heard from yet: two sessions, not one."""
        self.controller_lag_ms = 0
        """How late the controller's own loop has run lately. A machine that starves the
        controller starves the brokers too, though none of their contacts may have come
        late yet: the session stretches by this as by their lateness."""
        self.run_queue_per_cpu = 0.0
        """How many tasks have lately been running or waiting for each of the machine's
        CPUs (``broker.run_queue``)."""
        self._lateness = WindowedMax(GAP_WINDOW_MS)
        """The largest lateness of a contact in the last ``GAP_WINDOW_MS``."""
        self._silences = WindowedMax(GAP_WINDOW_MS)
        """The longest silences, in the last ``GAP_WINDOW_MS``, that a contact ended
        within the broker's session: how close a live broker came to being fenced."""

    def reset(
        self, broker_ids: Iterable[int], now_ms: int, gone: Iterable[int] = frozenset()
    ) -> None:
        """A controller taking over: every broker gets two sessions to check in, those
        found ``gone`` one."""
        self._last_contact_ms = dict.fromkeys(broker_ids, now_ms)
        self._last_of_kind_ms = {}
        self._replayed_offset = {}
        self._awaiting_first_contact = set(self._last_contact_ms) - set(gone)

    def registered(self, broker_id: int, now_ms: int) -> None:
        """A registration starts a new session: the time since the broker's last contact
        (it restarted) is no gap."""
        for kind in Contact:
            self._last_of_kind_ms.pop((broker_id, kind), None)
        self._awaiting_first_contact.discard(broker_id)
        self._last_contact_ms[broker_id] = max(now_ms, self._last_contact_ms.get(broker_id, 0))

    def touch(
        self,
        broker_id: int,
        now_ms: int,
        replayed_offset: int | None = None,
        kind: Contact = Contact.HEARTBEAT,
    ) -> None:
        """A contact arrived; ``replayed_offset`` (heartbeats) is the last metadata offset
        the broker says its image has replayed."""
        session_ms = self.effective_timeout_ms(now_ms)  # once: every contact comes here
        interval = self.intervals_ms.get(kind)
        if interval is not None:
            previous = self._last_of_kind_ms.get((broker_id, kind))
            if previous is not None:
                gap = now_ms - previous
                if interval < gap <= session_ms:
                    self._lateness.record(now_ms, gap - interval)
            self._last_of_kind_ms[(broker_id, kind)] = max(now_ms, previous or 0)
        if broker_id in self._last_contact_ms:
            silence = self.silent_ms(broker_id, now_ms)
            sessions = 2 if broker_id in self._awaiting_first_contact else 1
            if silence <= sessions * session_ms:  # ended within its session: a margin
                self._silences.record(now_ms, silence)
        self._awaiting_first_contact.discard(broker_id)
        self._last_contact_ms[broker_id] = max(now_ms, self._last_contact_ms.get(broker_id, 0))
        if replayed_offset is not None:
            self._replayed_offset[broker_id] = replayed_offset

    def effective_timeout_ms(self, now_ms: int) -> int:
        """The session timeout, stretched by the contacts' lateness of the last minute or
        the controller's own recent lag, or by a crowded machine, whichever is most."""
        lateness = max(int(self._lateness.largest(now_ms)), self.controller_lag_ms)
        late = self.session_timeout_ms + SESSION_STRETCH * lateness
        crowded = self.session_timeout_ms * self.run_queue_per_cpu / CROWDED_PER_CPU
        stretched = int(max(late, crowded))
        return max(self.session_timeout_ms, min(stretched, MAX_SESSION_TIMEOUT_MS))

    def longest_silence_ms(self, now_ms: int) -> int:
        """The longest a broker went without contact in the last ``GAP_WINDOW_MS`` before
        a contact ended its silence within its session: the margin a live broker had."""
        return int(self._silences.largest(now_ms))

    def silent_ms(self, broker_id: int, now_ms: int) -> int:
        """How long since the broker's last contact (0 if none is known)."""
        return now_ms - self._last_contact_ms.get(broker_id, now_ms)

    def forgive(self, stalled_ms: int, now_ms: int) -> None:
        """This controller could not read heartbeats for ``stalled_ms``: that time counts
        against no broker."""
        for broker_id, last in self._last_contact_ms.items():
            self._last_contact_ms[broker_id] = min(last + stalled_ms, now_ms)

    def expired(self, unfenced: Iterable[int], now_ms: int, own_id: int | None = None) -> list[int]:
        """The unfenced brokers silent for longer than the session timeout (never
        ``own_id``, the broker in the controller's own process)."""
        return sorted(b for b in unfenced if b != own_id and self._expiry_ms(b, now_ms) < now_ms)

    def next_expiry_ms(
        self, unfenced: Iterable[int], now_ms: int, own_id: int | None = None
    ) -> int:
        """When the first unfenced broker's session runs out if nothing arrives (``now_ms``
        plus a session when there is none to watch). ``own_id`` is left out, as in
        ``expired``: its heartbeats may come less often than a session (its quorum Fetches,
        which keep the others' sessions, go to no one), and waking for an expiry that
        fences no one would spin the loop."""
        expiries = [self._expiry_ms(b, now_ms) for b in unfenced if b != own_id]
        return min(expiries, default=now_ms + self.effective_timeout_ms(now_ms))

    def _expiry_ms(self, broker_id: int, now_ms: int) -> int:
        last = self._last_contact_ms.setdefault(broker_id, now_ms)
        sessions = 2 if broker_id in self._awaiting_first_contact else 1
        return last + sessions * self.effective_timeout_ms(now_ms)

    def behind(self, live: Iterable[int], offset: int) -> list[int]:
        """The live brokers that have not yet reported replaying ``offset``."""
        return sorted(b for b in live if self._replayed_offset.get(b, -1) < offset)
