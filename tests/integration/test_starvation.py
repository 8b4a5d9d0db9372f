"""A busy broker is not a dead broker: CPU starvation fences nobody and empties nothing.

Seen before the fix: six client processes against one broker holding ~730 partitions
made it fence *itself* about every 2.5 s ("fenced broker 1: no heartbeat"), re-elect
leaders for all its partitions each time, and answer Metadata with no brokers; a 3-broker
cluster on a shared 2-core machine fenced live brokers constantly. Client work on the
broker's one event loop starved its heartbeats and quorum traffic.

Each test runs competing CPU burners on every core plus client processes for two
minutes, then checks: no live broker was fenced, and every Metadata answer a client got
listed at least one broker. The quorum's leader changes are printed, not judged: under
this load a leader may legitimately be too slow for its followers.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kafkalite.cluster import Cluster
from tests.support.load import create_busy_topics, starve

pytestmark = [pytest.mark.interop, pytest.mark.slow, pytest.mark.heavy]


def judge(cluster: Cluster, summaries: list[dict]) -> None:
    events = [e for e in cluster.events() if not e.get("replay")]
    fenced = [e for e in events if e["type"] == "broker_fenced"]
    elections = [e for e in events if e["type"] == "quorum_leader_elected"]
    collectors = {b: (cluster.introspect(b) or {}).get("gc") for b in cluster.broker_states()}
    print(f"client summaries: {summaries}; quorum leader elections: {len(elections)}")
    print(f"garbage collectors: {collectors}")
    assert fenced == [], f"live brokers were fenced: {fenced}"
    assert not any(s.get("hung") for s in summaries), f"a client never finished: {summaries}"
    assert sum(s["metadata"] for s in summaries) > 0, "no client got a Metadata answer"
    assert all(s["empty_metadata"] == 0 for s in summaries), summaries
    assert all(s["sent"] > 0 for s in summaries), summaries
    # the startup objects are out of the collector's reach (``gc_pauses``)
    assert all(c and c["frozen_objects"] > 10_000 for c in collectors.values()), collectors


@pytest.mark.timeout(900)
def test_a_starved_single_broker_never_fences_itself(fresh_cluster: Cluster) -> None:
    # ~730 partitions on one broker
    topics = create_busy_topics(fresh_cluster.bootstrap_servers, 73, 10, 1)
    judge(fresh_cluster, starve(fresh_cluster.bootstrap_servers, topics))


@pytest.mark.timeout(900)
def test_a_starved_three_broker_cluster_fences_no_live_broker(
    make_cluster3: Callable[..., Cluster],
) -> None:
    cluster = make_cluster3()
    topics = create_busy_topics(cluster.bootstrap_servers, 30, 10, 3)
    judge(cluster, starve(cluster.bootstrap_servers, topics))
