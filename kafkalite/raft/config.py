"""Timeouts of the metadata quorum, named as Kafka's ``controller.quorum.*`` settings.

Kafka's defaults (election 1 s, fetch 2 s) are tuned for data centres; a lab wants a new
leader well under a second after ``kill -9``, and a course server running one cluster per
student wants an idle quorum to stay quiet. Both hold here: a follower whose leader's
connection is refused or reset (a killed or stopped process) stands for election at once,
the survivors in turn by id (``RaftNode.voter_unreachable``), and wins a few round trips
later, ~0.1-0.3 s;
only a leader that is paused or cut off, whose connections stay open, is found by
``fetch_timeout_ms``, within 0.75 s. A split vote costs one more randomised election timeout in
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
    fetch_timeout_ms: int = 750
    """``controller.quorum.fetch.timeout.ms``: a follower that has not fetched from its leader
    successfully for this long stands for election (at once if it finds the leader gone).
    The leader resigns if a majority has not fetched for 1.5x this (check quorum, KIP-1127).
    An idle follower hears from its leader every ``fetch_max_wait_ms`` plus a round trip:
    250 ms are left for that round trip on a loaded machine (Kafka leaves 1.5 s), and an
    isolated controller is replaced 0.25-0.75 s after it was cut off (its successor then
    fences it once its broker session has run out, ``controller/heartbeats.py``)."""
    request_timeout_ms: int = 1000
    """``controller.quorum.request.timeout.ms``: resend a request that got no response.
    Well above ``fetch_max_wait_ms``: a parked Fetch resent before its (late) answer came
    would have that answer dropped and be parked again."""
    fetch_max_wait_ms: int = 500
    """How long the leader parks a Fetch that has nothing new (Kafka's ``max_wait_ms``, the
    same 500 ms). A parked Fetch is answered at once when records arrive, so the wait
    costs commits nothing; it sets how often an idle follower asks, and each Fetch is a
    round trip through both processes and the link proxy: at 250 ms these were most of
    an idle cluster's CPU (an empty 3-broker cluster: 4.4-4.8% of a core, against
    3.0-3.2% at 500 ms, measured back to back). A killed leader is found by its refused
    connection, not by this clock."""
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
