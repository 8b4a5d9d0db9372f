"""What an idle cluster costs a course server that runs one per student.

- **One idle 3-broker cluster**: CPU (percent of one core) and RSS of everything it runs
  (three broker processes and the link-proxy daemon), over ``WINDOW_S`` seconds after it
  settled: CPU is the processes' user+system time over the window, RSS the sum at its end.
- **The same cluster holding a lab's topics** (``LAB_TOPICS`` topics of 3 partitions,
  replication factor 3): what a student's cluster costs between exercises. Followers keep
  fetching from every leader (each Fetch held ``replica.fetch.wait.max.ms`` when there is
  nothing new), so this, not the empty cluster, is the figure a course server plans with.
- **Many idle clusters on one machine** (``--clusters N``): N 3-broker clusters start and
  idle side by side; then, in each one in turn, the active controller is killed (SIGKILL)
  and the time until its successor commits is measured against the target (1 s, as in
  ``bench.failover``): the machine holds N clusters if each still fails over in target.

Run: ``.venv/bin/python -m bench.idle`` (add ``--clusters 8`` for the second figure).
``--hold`` measures nothing: it keeps the clusters up, idle, until interrupted, as the load
beside ``bench.failover`` and ``bench.dashboard``'s busy figures.
The load average is recorded: other work on the machine inflates both figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import statistics
import time
from collections.abc import Iterator
from typing import Any

import psutil

from bench.common import bench_cluster, record, sigterm_unwinds
from bench.failover import sigkill
from kafkalite.cluster import Cluster
from kafkalite.events import EventType
from tests.support.topics import create_topic
from tests.support.waiting import wait_for

WINDOW_S = 60.0
SETTLE_S = 10.0
LAB_TOPICS = 3
CONTROLLER_FAILOVER_TARGET_S = 1.0


def processes(cluster: Cluster) -> list[psutil.Process]:
    pids = [cluster.pid(b.broker_id) for b in cluster.spec.brokers]
    if cluster.spec.links_pid is not None:
        pids.append(cluster.spec.links_pid)
    return [psutil.Process(pid) for pid in pids]


def cpu_s(procs: list[psutil.Process]) -> float:
    """User+system CPU seconds of ``procs`` so far (threads included)."""
    return float(sum(p.cpu_times().user + p.cpu_times().system for p in procs))


def pss_mib(procs: list[psutil.Process]) -> float:
    """Proportional set size: shared pages (the interpreter, libssl, ...) split among the
    processes that map them, which is what one more cluster really costs a machine; RSS
    counts them again in every process."""
    return float(sum(p.memory_full_info().pss for p in procs)) / 2**20


def idle_cost(clusters: list[Cluster], window_s: float) -> dict[str, Any]:
    """Per cluster: CPU as percent of one core over ``window_s``, RSS and PSS in MiB at
    its end; and each process of the first cluster on its own."""
    procs = [processes(c) for c in clusters]
    before = [cpu_s(p) for p in procs]
    each_before = [cpu_s([x]) for x in procs[0]]
    time.sleep(window_s)  # the measurement window itself: nothing to wait for
    each = [100 * (cpu_s([x]) - b) / window_s for x, b in zip(procs[0], each_before, strict=True)]
    cpu = [100 * (cpu_s(p) - b) / window_s for p, b in zip(procs, before, strict=True)]
    rss = [sum(x.memory_info().rss for x in p) / 2**20 for p in procs]
    pss = [pss_mib(p) for p in procs]
    controller = next(b["id"] for b in clusters[0].status()["brokers"] if b["controller"])
    names = [f"broker {b.broker_id}" for b in clusters[0].spec.brokers] + ["link proxies"]
    names = [f"{n} (controller)" if n == f"broker {controller}" else n for n in names]
    return {
        "cpu_percent_of_a_core": round(statistics.mean(cpu), 2),
        "cpu_percent_max": round(max(cpu), 2),
        "rss_mib": round(statistics.mean(rss), 1),
        "rss_mib_max": round(max(rss), 1),
        "pss_mib": round(statistics.mean(pss), 1),
        "first_cluster_by_process": {
            name: {"cpu_percent": round(c, 2), "rss_mib": round(x.memory_info().rss / 2**20, 1)}
            for name, c, x in zip(names, each, procs[0], strict=True)
        },
    }


def wake_up_cost_us(wakes: int = 200) -> float:
    """CPU microseconds one timer wake-up of an idle asyncio loop costs on this machine: an
    idle cluster's cost is mostly such wake-ups (each quorum Fetch, heartbeat and check
    wakes a process), so this is what to scale its figures by on another machine."""

    async def sleeps() -> None:
        for _ in range(wakes):
            await asyncio.sleep(0.005)

    started = time.process_time()
    asyncio.run(sleeps())
    return round((time.process_time() - started) / wakes * 1e6, 1)


def controller_failover_s(cluster: Cluster) -> float:
    """SIGKILL the active controller; seconds until its successor is active."""
    status = wait_for(lambda: cluster.status()["quorum"], what="a quorum leader")
    active = status["leader"]
    stream = cluster.event_stream()
    stream.poll(cluster.broker_states())  # only what happens from now on counts
    killed = sigkill(cluster, active)

    def successor() -> float | None:
        for event in stream.poll(cluster.broker_states()):
            if event["type"] == EventType.CONTROLLER_ACTIVATED and event["broker"] != active:
                return float(event["time_ms"]) / 1000
        return None

    took = wait_for(successor, 30, "a new active controller") - killed
    cluster.start(active)
    return took


def create_lab_topics(cluster: Cluster) -> None:
    for i in range(LAB_TOPICS):
        create_topic(cluster.bootstrap_servers, f"lab-topic-{i}", 3, 3, {})


@contextlib.contextmanager
def idle_clusters(count: int) -> Iterator[list[Cluster]]:
    with contextlib.ExitStack() as stack:
        yield [stack.enter_context(bench_cluster(3)) for _ in range(count)]


def hold(count: int) -> None:
    """``count`` idle clusters holding a lab's topics, until SIGINT or SIGTERM."""
    with sigterm_unwinds(), idle_clusters(count) as clusters:
        for cluster in clusters:
            create_lab_topics(cluster)
        time.sleep(SETTLE_S)  # start-up work (metadata replay, registrations) is not idle load
        print(f"holding {count} clusters", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            signal.pause()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="bench.idle", description=__doc__)
    parser.add_argument("--clusters", type=int, default=1)
    parser.add_argument("--window-s", type=float, default=WINDOW_S)
    parser.add_argument(
        "--hold",
        action="store_true",
        help="measure nothing: start the clusters with a lab's topics, print 'holding', and "
        "keep them up until interrupted (the load beside bench.failover and bench.dashboard)",
    )
    args = parser.parse_args(argv)
    if args.hold:
        hold(args.clusters)
        return
    results: dict[str, Any] = {"clusters": args.clusters, "window_s": args.window_s}
    with idle_clusters(args.clusters) as clusters:
        time.sleep(SETTLE_S)  # start-up work (metadata replay, registrations) is not idle cost
        results["load_average_before"] = os.getloadavg()[0]
        results["asyncio_wake_up_cpu_us"] = wake_up_cost_us()
        results["idle"] = idle_cost(clusters, args.window_s)
        for cluster in clusters:
            create_lab_topics(cluster)
        time.sleep(SETTLE_S)
        results["idle_with_lab_topics"] = idle_cost(clusters, args.window_s)
        if args.clusters > 1:
            failovers = [controller_failover_s(c) for c in clusters]
            results["controller_failover_s"] = [round(f, 2) for f in failovers]
            results["all_within_target"] = max(failovers) <= CONTROLLER_FAILOVER_TARGET_S
        results["load_average_after"] = os.getloadavg()[0]
    name = "idle" if args.clusters == 1 else f"idle_{args.clusters}_clusters"
    record(name, results)


if __name__ == "__main__":
    main()
