"""Timeouts of the metadata quorum, named as Kafka's ``controller.quorum.*`` settings.

Kafka's defaults (election 1 s, fetch 2 s) are tuned for data centres; a lab wants a new
leader well under a second after ``kill -9``, so the defaults here are shorter. A follower
whose leader's connection is refused or reset (a killed or stopped process) stands for
election after the jitter alone (``RaftNode.voter_unreachable``) and wins one round trip
later; a leader that is paused or cut off, whose connections stay open, is noticed after
``fetch_timeout_ms``, ~0.5 s. A split vote costs one more randomised election timeout in
[election_timeout_ms, 2 * election_timeout_ms).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields


@dataclass(frozen=True, slots=True)
class RaftConfig:
    """The quorum's timers, in milliseconds of the injected clock."""

    election_timeout_ms: int = 300
    """``controller.quorum.election.timeout.ms``: a candidate or unattached voter waits a
    random time in [t, 2t) before (re)starting an election."""
    fetch_timeout_ms: int = 500
    """``controller.quorum.fetch.timeout.ms``: a follower that has not fetched from its leader
    successfully for this long stands for election. The leader resigns if a majority has not
    fetched for 1.5x this (check quorum, KIP-1127)."""
    request_timeout_ms: int = 400
    """``controller.quorum.request.timeout.ms``: resend a request that got no response.
    Above ``fetch_max_wait_ms``, or a parked Fetch would be resent before its answer."""
    fetch_max_wait_ms: int = 250
    """How long the leader parks a Fetch that has nothing new (Kafka's ``max_wait_ms``,
    500 ms there). A parked Fetch is answered at once when records arrive, so the wait
    costs commits nothing; it sets how often an idle follower asks, and each Fetch is a
    round trip through both processes and the link proxy, most of an idle cluster's CPU.
    Bounded by ``fetch_timeout_ms``, which counts from the last answer: an idle follower
    hears from its leader every ``fetch_max_wait_ms`` plus a round trip, and 250 ms of
    that timeout are left for the round trip on a loaded machine (Kafka leaves 1.5 s).
    A dead leader is noticed ``fetch_timeout_ms`` after the last answer, which came up to
    a wait before the kill: a longer wait makes failover no slower."""
    election_backoff_max_ms: int = 300
    """``controller.quorum.election.backoff.max.ms``: the longest a preferred successor waits
    after EndQuorumEpoch before standing."""
    fetch_max_entries: int = 64
    """At most this many entries in one Fetch response (Kafka bounds by bytes)."""
    fetch_snapshot_max_bytes: int = 4096
    """Chunk size of FetchSnapshot responses."""

    @property
    def check_quorum_timeout_ms(self) -> int:
        """How long a leader keeps leading without hearing from a majority (Kafka: 1.5x)."""
        return self.fetch_timeout_ms * 3 // 2

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> RaftConfig:
        """Build from Kafka-style properties, e.g. ``controller.quorum.election.timeout.ms``."""
        values: dict[str, int] = {}
        for f in fields(cls):
            key = "controller.quorum." + f.name.removesuffix("_ms").replace("_", ".") + ".ms"
            if f.name.endswith("_ms") and key in props:
                values[f.name] = int(props[key])
        return cls(**values)
