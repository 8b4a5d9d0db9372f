"""Which other voters this broker has found gone: their process no longer listens.

A request to a voter that finds the connection refused or reset means nothing listens
there any more (a network partition resets nothing: faults hold bytes, peers time out),
so the voter was killed or stopped. Such a broker stays registered and unfenced until
the active controller fences it: at once when the controller sees its connection close,
but when it led the quorum only once another voter has been elected and has found it
gone too (``broker.controller_service``), a few hundred ms in which Metadata would still
list it. kafka-python picks any listed broker for its next request and tries no other
when that one refuses, so a student who kills the controller and creates a topic on the
next line would get ECONNREFUSED. Brokers therefore leave gone voters out of what they
tell clients (``ClusterIdentity``) until there is a sign of life.

Signs of life: an answer from the voter, a request from it, or a metadata record in
which the controller registers or unfences it (a restarted broker registers again), if
that record was appended after the finding: a broker that starts replays its metadata
log, and a record of the voter's last return, replayed there, is history, not news (lab
04, 2026-11-29: broker 2 restarted after the controller, broker 1, was killed, found it
gone when it asked for votes, then replayed broker 1's unfencing of a few seconds before
and listed it again; kafka-python's admin client picked it: ECONNREFUSED). A
voter nobody talks to (a follower does not send to other followers) could otherwise stay
"gone" for ever on a false alarm, so a finding also expires after ``FORGET_AFTER_MS``,
long after any controller would have fenced a broker that is really gone.
"""

from __future__ import annotations

FORGET_AFTER_MS = 30_000


class GoneVoters:
    """Voter ids found gone, each with when it was found and the metadata log's end
    offset then; pure (the caller's clock and log)."""

    def __init__(self, forget_after_ms: int = FORGET_AFTER_MS) -> None:
        self._found: dict[int, tuple[int, int]] = {}  # voter -> (found at ms, log end then)
        self._forget_after_ms = forget_after_ms

    def found_gone(self, voter_id: int, now_ms: int, log_end_offset: int) -> bool:
        """Record that nothing listens at ``voter_id`` now, when the metadata log ends
        at ``log_end_offset``; True if that is news."""
        news = voter_id not in self._found
        self._found[voter_id] = (now_ms, log_end_offset)
        return news

    def heard_from(self, voter_id: int) -> bool:
        """A sign of life from ``voter_id``: it is not gone (any more). True if it was
        found gone until now (news for the view)."""
        return self._found.pop(voter_id, None) is not None

    def registered(self, voter_id: int, offset: int) -> bool:
        """The controller registered or unfenced ``voter_id`` in the record at
        ``offset``: a sign of life if the record came after the finding (at or past the
        log's end then), history otherwise. True if that is news for the view."""
        _found_at_ms, log_end = self._found.get(voter_id, (0, offset))
        return offset >= log_end and self.heard_from(voter_id)

    def at(self, now_ms: int) -> frozenset[int]:
        """The voters found gone, less the findings older than the expiry."""
        expired = [v for v, (t, _) in self._found.items() if now_ms - t >= self._forget_after_ms]
        for voter_id in expired:
            del self._found[voter_id]
        return frozenset(self._found)
