"""CPU starvation: how late a 3-broker cluster's control planes run, and what Python's
garbage collector costs each broker meanwhile.

The load is ``test_starvation``'s (``tests.support.load.starve``): a CPU burner on every
core and six client processes writing to 30 topics of 10 partitions (replication factor
3) for two minutes. Every 250 ms each broker's ``/state`` is read. Reported per broker: the
worst ``control_loop_lag_ms`` (the quorum and the heartbeats run there: a control loop
running later than ``broker.session.timeout.ms`` minus the heartbeat interval gets a live
broker fenced) and ``loop_lag_ms`` seen, the most crowded ``run_queue_per_cpu`` it
measured, the shortest and longest session the active controller judged silence by
(``broker_session_timeout_ms``, on the broker that was controller) and the longest
silence of a live broker it saw (``longest_broker_silence_ms``: the margin), and at the end its
``gc`` (full collections, their longest pause); then the brokers the controller fenced at
least once (all of them live: none should be).

Run: ``.venv/bin/python -m bench.starvation``. Other work on the machine adds to the
starvation; the load average is recorded.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

from bench.common import bench_cluster, record
from kafkalite.cluster import Cluster
from kafkalite.events import EventType
from tests.support.load import create_busy_topics, starve

SAMPLE_S = 0.25


LAGS = ("control_loop_lag_ms", "loop_lag_ms")
THREATENING_LAG_MS = 300
"""A control loop this late, with a heartbeat due every 400 ms, leaves a bare 800 ms
session little room: the share of samples at or above it is reported."""


def sample_lags(cluster: Cluster, stop: threading.Event) -> dict[int, dict[str, Any]]:
    """Per broker, the worst of each lag its ``/state`` showed until ``stop``, and the
    share of samples whose control loop lag was at least ``THREATENING_LAG_MS``."""
    samples: dict[int, list[dict[str, float]]] = {b: [] for b in cluster.broker_states()}
    sessions: dict[int, list[int]] = {b: [] for b in samples}
    silences: dict[int, list[int]] = {b: [] for b in samples}
    while not stop.wait(SAMPLE_S):
        for broker, seen in samples.items():
            state = cluster.introspect(broker, 2.0) or {}
            seen.append({name: state.get(name) or 0 for name in (*LAGS, "run_queue_per_cpu")})
            if state.get("broker_session_timeout_ms") is not None:
                sessions[broker].append(state["broker_session_timeout_ms"])
                silences[broker].append(state["longest_broker_silence_ms"])
    return {
        broker: {
            **{f"worst_{name}": max((s[name] for s in seen), default=0) for name in LAGS},
            "most_run_queue_per_cpu": max((s["run_queue_per_cpu"] for s in seen), default=0),
            "session_ms_as_controller": [min(sessions[broker]), max(sessions[broker])]
            if sessions[broker]
            else None,
            "longest_silence_of_a_live_broker_ms_as_controller": max(
                silences[broker], default=None
            ),
            "share_of_samples_control_loop_lag_over_300_ms": round(
                sum(s["control_loop_lag_ms"] >= THREATENING_LAG_MS for s in seen)
                / max(len(seen), 1),
                3,
            ),
        }
        for broker, seen in samples.items()
    }


def main() -> None:
    load_average = os.getloadavg()[0]
    with bench_cluster(brokers=3) as cluster:
        topics = create_busy_topics(cluster.bootstrap_servers, 30, 10, 3)
        stop = threading.Event()
        lags: dict[int, dict[str, Any]] = {}
        sampler = threading.Thread(target=lambda: lags.update(sample_lags(cluster, stop)))
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
