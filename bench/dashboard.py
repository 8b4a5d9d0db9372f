"""The dashboard: its refresh rate and what it costs the notebook's kernel while it idles,
and how soon it draws a new leader after a click on "kill".

- **Cost**: a real IPython kernel (jupyter_client, as JupyterLab starts one) runs
  ``Dashboard(cluster)`` against a 3-broker cluster with 3 topics of 3 partitions (RF 3),
  records written; then, with nothing else happening, the kernel process's CPU time is
  read over a window (psutil), and the dashboard's own refresh counter gives refreshes
  per second. Also: the same with one broker paused (a hung broker must not slow the
  refresh).
- **Kill click**: JupyterLab in headless Chromium (Debian's package, driven by
  Playwright, as ``tests/browser`` does) runs a notebook ending in ``lab.dashboard()``; a
  click on "kill" in the card of a partition's leader, until the widget draws another
  leader for that partition, timed in the page (``tests.support.jupyterlab_page``). At a
  quiet moment and again with ``bench.idle --clusters 24`` beside it; the killed broker is
  started again between clicks.

Run: ``.venv/bin/python -m bench.dashboard``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import psutil
from jupyter_client.manager import start_new_kernel
from kafka import KafkaProducer

from bench.common import (
    BESIDE_CLUSTERS,
    bench_cluster,
    failover_steps,
    idle_clusters_beside,
    load_average,
    record,
    wait_until_quiet,
)
from kafkalite.cluster import Cluster
from kafkalite.lab import jupyter
from tests.support.chromium import CHROMIUM, CHROMIUM_FLAGS
from tests.support.jupyterlab_page import (
    KILL_AND_TIME_THE_NEW_LEADER,
    PARTITION_LED_BY_A_RUNNING_BROKER,
    dismiss_news,
    run_all_cells,
)
from tests.support.ports import free_base_port
from tests.support.topics import create_topic
from tests.support.waiting import wait_for

WARMUP_S = 5.0
WINDOW_S = 30.0
TOPICS = 3
KILL_CLICKS = 7
DRAWN_TIMEOUT_MS = 30_000


def _run(client: Any, code: str, timeout_s: float = 60) -> str:
    """Execute in the kernel; return its last stdout line."""
    out: list[str] = []

    def hook(msg: dict[str, Any]) -> None:
        if msg["msg_type"] == "stream":
            out.append(msg["content"]["text"])
        if msg["msg_type"] == "error":
            raise RuntimeError("\n".join(msg["content"]["traceback"]))

    client.execute_interactive(code, timeout=timeout_s, output_hook=hook)
    return "".join(out).strip().splitlines()[-1] if out else ""


def _measure(client: Any, kernel_pid: int) -> dict[str, float]:
    process = psutil.Process(kernel_pid)
    time.sleep(WARMUP_S)
    before = process.cpu_times()
    start_refreshes = int(_run(client, "print(d.poller.refreshes)"))
    started = time.monotonic()
    time.sleep(WINDOW_S)
    after = process.cpu_times()
    elapsed = time.monotonic() - started
    refreshes = int(_run(client, "print(d.poller.refreshes)"))
    cpu = (after.user - before.user) + (after.system - before.system)
    return {
        "kernel_cpu_percent_of_one_core": round(100 * cpu / elapsed, 1),
        "refreshes_per_s": round((refreshes - start_refreshes) / elapsed, 2),
    }


def _setup(cluster: Cluster) -> None:
    producer = KafkaProducer(bootstrap_servers=cluster.bootstrap_servers, acks="all")
    for t in range(TOPICS):
        create_topic(cluster.bootstrap_servers, f"bench-{t}", 3, 3)
        for i in range(300):
            producer.send(f"bench-{t}", f"record-{i}".encode())
    producer.flush(60)
    producer.close()


KERNEL_SETUP = """
from pathlib import Path
from kafkalite.cluster import Cluster
from kafkalite.lab.dashboard import Dashboard
d = Dashboard(Cluster.attach(Path({root!r})))
print("ready")
"""


DASHBOARD_NOTEBOOK = {
    "cells": [
        {
            "cell_type": "code",
            "metadata": {},
            "execution_count": None,
            "outputs": [],
            "source": [
                "import kafkalite.lab\n",
                "lab = kafkalite.lab.connect()\n",
                "lab.dashboard()",
            ],
        }
    ],
    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
    "nbformat": 4,
    "nbformat_minor": 5,
}


@contextlib.contextmanager
def dashboard_page(cluster: Cluster) -> Iterator[Any]:
    """JupyterLab on a notebook that opens the dashboard, run, in headless Chromium."""
    from playwright.sync_api import sync_playwright  # noqa: PLC0415  (only this figure)

    with tempfile.TemporaryDirectory(prefix="kafkalite-bench-lab-") as tmp:
        labs = Path(tmp) / "labs"
        labs.mkdir()
        (labs / "dashboard.ipynb").write_text(json.dumps(DASHBOARD_NOTEBOOK))
        server, _ = jupyter.start(Path(cluster.spec.root), labs, port=free_base_port(1))
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch_persistent_context(
                    str(Path(tmp) / "chromium-profile"),
                    executable_path=str(CHROMIUM),
                    args=CHROMIUM_FLAGS,
                    headless=True,
                    viewport={"width": 1400, "height": 1000},
                )
                try:
                    page = browser.new_page()
                    page.set_default_timeout(120_000)
                    page.goto(f"{server.base_url}/lab/tree/dashboard.ipynb?token={server.token}")
                    page.locator(".jp-Notebook").first.wait_for()
                    run_all_cells(page)
                    page.locator(".kl-card").first.wait_for()
                    dismiss_news(page)
                    yield page
                finally:
                    browser.close()
        finally:
            jupyter.stop(Path(cluster.spec.root))
            shutil.rmtree(labs, ignore_errors=True)


def all_running_and_in_sync(cluster: Cluster) -> bool:
    """Every broker running, every partition fully in sync and led by its preferred replica:
    until the controller's leader rebalance has moved leadership back to a restarted broker,
    that move could be drawn right after a click and timed as its failover."""
    status = cluster.status()
    running = {b["state"] for b in status["brokers"]} == {"running"}
    return running and all(
        len(p["isr"]) == 3 and p["leader"] == p["replicas"][0]["broker"]
        for p in status["partitions"]
    )


def is_dead(cluster: Cluster, broker_id: int) -> bool:
    return cluster.broker_states()[broker_id].value == "dead"


def _undrawn(cluster: Cluster, page: Any, topic: str, partition: str, leader: str) -> str:
    """What a click that drew no new leader left behind, to find out why: the cluster's
    view of the partition, what the widget draws and says (a screenshot beside)."""
    led = [
        {k: p[k] for k in ("leader", "leader_epoch", "isr")}
        for p in cluster.status()["partitions"]
        if (p["topic"], str(p["partition"])) == (topic, str(partition))
    ]
    drawn = page.evaluate(
        """([topic, partition]) => [...document.querySelectorAll('.kl-partition')]
          .filter(p => p.dataset.topic === topic && p.dataset.partition === partition)
          .map(p => [p.closest('.kl-live') ? 'live' : 'not live', p.dataset.leader])""",
        [topic, partition],
    )
    cards = page.evaluate(
        "() => [...document.querySelectorAll('.kl-broker')].map(c => c.dataset.state)"
    )
    shot = Path(tempfile.gettempdir()) / "kafkalite-bench-dashboard-undrawn-click.png"
    page.screenshot(path=str(shot))
    return (
        f"no new leader of {topic}-{partition} drawn in 30 s after a click on kill of broker"
        f" {leader}: the cluster says {led} with brokers {cluster.broker_states()}; the page"
        f" draws {drawn}, cards {cards} ({shot})"
    )


def kill_clicks(cluster: Cluster, page: Any, clicks: int) -> dict[str, Any]:
    """``clicks`` times: kill a partition's leader from its card; ms until the new leader
    is drawn, and where that time went, each after the click: the cluster's events (the
    fence, the new leader's election), then the kernel's dashboard state that showed it
    (built by its poller; what follows is the trip to the page and its drawing). The
    broker is started again, and everything back in sync, before the next."""
    before = load_average()
    drawn: list[float] = []
    steps: list[dict[str, int | None]] = []
    for _ in range(clicks):
        wait_for(lambda: all_running_and_in_sync(cluster), 120, "every broker back in sync")
        leaders = {
            f"{p['topic']}/{p['partition']}": str(p["leader"])
            for p in cluster.status()["partitions"]
        }
        topic, partition, leader = page.wait_for_function(
            PARTITION_LED_BY_A_RUNNING_BROKER, arg=leaders
        ).json_value()
        took, clicked_ms, state_ms = page.evaluate(
            KILL_AND_TIME_THE_NEW_LEADER, [topic, partition, leader, DRAWN_TIMEOUT_MS]
        )
        if took is None:
            raise AssertionError(_undrawn(cluster, page, topic, partition, leader))
        drawn.append(took)
        victim = int(leader)
        cluster.follow_other_shells()  # the kernel killed it, and recorded it
        wait_for(partial(is_dead, cluster, victim), 30, "the kill")
        step: dict[str, int | None] = {
            **failover_steps(cluster, clicked_ms, victim, topic, int(partition)),
            "state_built_ms": round(state_ms - clicked_ms) if state_ms is not None else None,
        }
        steps.append(step)
        cluster.start(victim)
    return {
        "runs_ms": [round(d) for d in drawn],
        "median_ms": round(statistics.median(drawn)),
        "max_ms": round(max(drawn)),
        "after_the_click": steps,
        "load_average_before": before,
        "load_average_after": load_average(),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.dashboard", description=__doc__)
    parser.add_argument("--clicks", type=int, default=KILL_CLICKS, help="kill clicks per load")
    parser.add_argument(
        "--beside", type=int, default=BESIDE_CLUSTERS, help="idle clusters beside (0: none)"
    )
    parser.add_argument(
        "--quiet-wait-s", type=float, default=600, help="the longest wait for a quiet moment"
    )
    args = parser.parse_args(argv)
    results: dict[str, Any] = {"window_s": WINDOW_S, "topics": TOPICS, "partitions": TOPICS * 3}
    with bench_cluster(3) as cluster:
        _setup(cluster)
        env = {**os.environ, "PYTHONPATH": os.getcwd()}
        manager, client = start_new_kernel(kernel_name="python3", env=env)
        try:
            pid = int(_run(client, "import os; print(os.getpid())"))
            assert _run(client, KERNEL_SETUP.format(root=cluster.spec.root)) == "ready"
            results["idle"] = _measure(client, pid)
            cluster.pause(2)
            results["one_broker_paused"] = _measure(client, pid)
            cluster.resume(2)
            _run(client, "d.close()")
        finally:
            client.stop_channels()
            manager.shutdown_kernel(now=True)
        clicks: dict[str, Any] = {}
        with dashboard_page(cluster) as page:
            wait_until_quiet(args.quiet_wait_s)
            clicks["quiet"] = kill_clicks(cluster, page, args.clicks)
            if args.beside:
                with idle_clusters_beside(args.beside):
                    clicks[f"beside_{args.beside}_idle_clusters"] = kill_clicks(
                        cluster, page, args.clicks
                    )
        results["kill_click_to_new_leader_drawn"] = {**clicks, "target_ms": 1500}
    results["load_average"] = [round(x, 2) for x in os.getloadavg()]
    record("dashboard", results)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
