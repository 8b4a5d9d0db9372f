"""CPU starvation: how close a starved 3-broker cluster's live brokers come to being
fenced, and what Python's garbage collector costs each broker meanwhile.

The load is ``test_starvation``'s (``tests.support.load.starve``): a CPU burner on every
core and six client processes writing to 30 topics of 10 partitions (replication factor
3) for two minutes. Every 250 ms each broker's ``/state`` is read. Reported per broker: the
worst ``loop_lag_ms`` seen (its main loop, which serves clients); while it was the active
controller, the session it fences a silent broker by (``broker_session_timeout_ms``), the
longest silence of a live broker it saw (``longest_broker_silence_ms``, and the longest
of the silences sampled, ``broker_silence_ms``): the margin; at the end its ``gc`` (full
collections, their longest pause); then the brokers the controller fenced at least once
(all of them live: none should be).

Run: ``.venv/bin/python -m bench.starvation``. Other work on the machine adds to the
starvation; the load average is recorded.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from bench.common import bench_cluster, describe_or_run, record
from kafkalite.cluster import Cluster
from kafkalite.events import EventType
from tests.support.load import create_busy_topics, starve

SAMPLE_S = 0.25


def sample(cluster: Cluster, stop: threading.Event) -> dict[int, dict[str, Any]]:
    """Per broker, until ``stop``: the worst loop lag its ``/state`` showed, and, while it
    was the active controller, its session and the longest silences of live brokers."""
    lags: dict[int, list[int]] = {b: [] for b in cluster.broker_states()}
    sessions: dict[int, set[int]] = {b: set() for b in lags}
    silences: dict[int, list[int]] = {b: [] for b in lags}
    while not stop.wait(SAMPLE_S):
        for broker, seen in lags.items():
            state = cluster.introspect(broker, 2.0) or {}
            seen.append(state.get("loop_lag_ms") or 0)
            if state.get("broker_session_timeout_ms") is not None:
                sessions[broker].add(state["broker_session_timeout_ms"])
                silences[broker].append(state["longest_broker_silence_ms"] or 0)
                silences[broker].extend((state.get("broker_silence_ms") or {}).values())
    return {
        broker: {
            "worst_loop_lag_ms": max(seen, default=0),
            "session_ms_as_controller": sorted(sessions[broker]) or None,
            "longest_silence_of_a_live_broker_ms_as_controller": max(
                silences[broker], default=None
            ),
        }
        for broker, seen in lags.items()
    }


def main() -> None:
    describe_or_run("bench.starvation", __doc__)
    load_average = os.getloadavg()[0]
    with bench_cluster(brokers=3) as cluster:
        topics = create_busy_topics(cluster.bootstrap_servers, 30, 10, 3)
        stop = threading.Event()
        lags: dict[int, dict[str, Any]] = {}
        sampler = threading.Thread(target=lambda: lags.update(sample(cluster, stop)))
        sampler.start()
        started = time.monotonic()
        summaries = starve(cluster.bootstrap_servers, topics)
        stop.set()
        sampler.join()
        results: dict[str, Any] = {
            "load_seconds": round(time.monotonic() - started),
            "load_average_at_start": round(load_average, 1),
            "records_sent": sum(s.get("sent", 0) for s in summaries),
            "brokers": {
                b: {**lags[b], "gc": (cluster.introspect(b) or {}).get("gc")} for b in sorted(lags)
            },
            "live_brokers_fenced": sorted(
                {
                    e["broker_id"]
                    for e in cluster.events()
                    if e["type"] == EventType.BROKER_FENCED.value and not e.get("replay")
                }
            ),
        }
    record("starvation", results)


if __name__ == "__main__":
    main()
