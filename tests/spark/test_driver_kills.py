"""SIGKILL the Spark driver at random points, ten times, while orders keep coming; restart
it from its checkpoint each time. The exactly-once pipeline's output must be the input
once: no duplicate, no gap (the history checker), the same per-customer totals.

The driver runs as its own process group (the Python driver, its JVM with the local
executors, and the Python workers): the kill takes all of them at once, as a crashed
machine would. Most kills wait for a micro-batch to commit and then strike at a random
moment of the next ones (mid-read, mid-transaction, between batches); every third kill
strikes at a random moment after start, often before the first batch.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kafkalite.cluster import Cluster
from kafkalite.spark.driver import DriverProcess
from tests.spark.orders_check import OrderLoad, judge
from tests.support.topics import create_topic
from tests.support.waiting import wait_for

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.xdist_group("spark"),
    pytest.mark.timeout(1200),
]

ROOT = Path(__file__).resolve().parents[2]
KILLS = 10


def committed_batches(checkpoint: Path) -> int:
    return len(list((checkpoint / "commits").glob("[0-9]*")))


def kill_repeatedly(driver: DriverProcess, checkpoint: Path, rng: random.Random) -> None:
    """Start the driver and SIGKILL it, KILLS times."""
    for kill in range(KILLS):
        committed = committed_batches(checkpoint)
        process = driver.start()
        if kill % 3 == 0:
            deadline = time.monotonic() + rng.uniform(1, 12)
            while time.monotonic() < deadline and process.poll() is None:
                time.sleep(0.05)
        else:
            wait_for(
                lambda c=committed, p=process: (
                    committed_batches(checkpoint) > c or p.poll() is not None
                ),
                600,
                f"a micro-batch of run {driver.runs}",
            )
            time.sleep(rng.uniform(0, 1.5))
        assert process.poll() is None, f"the driver died by itself: {driver.log()[-3000:]}"
        driver.kill()


def test_driver_sigkilled_ten_times_output_is_input_once(
    make_cluster3: Callable[..., Cluster], tmp_path: Path
) -> None:
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    print(f"seed {seed}")
    cluster = make_cluster3()
    bootstrap = cluster.bootstrap_servers
    for topic in ("orders", "enriched"):
        create_topic(bootstrap, topic, 3, 3, {"min.insync.replicas": "2"})
    checkpoint = tmp_path / "checkpoint"
    driver = DriverProcess(
        "examples.spark.exactly_once_topic",
        ["--bootstrap", bootstrap, "--input", "orders", "--output", "enriched",
         "--checkpoint", str(checkpoint), "--max-offsets-per-trigger", "500"],
        log_dir=tmp_path,
        cwd=ROOT,
    )  # fmt: skip
    try:
        with OrderLoad(bootstrap, "orders", rate=50) as orders:
            kill_repeatedly(driver, checkpoint, rng)
            orders.stop()
        driver.start("--available-now")  # the last run reads everything there is, then stops
        assert driver.wait(600) == 0, driver.log()[-3000:]
    finally:
        driver.kill()
    verdict = judge(bootstrap, "orders", "enriched", orders.acks)
    print(
        f"{KILLS} kills, {driver.runs} runs, {committed_batches(checkpoint)} batches",
        verdict.report.summary(),
    )
    assert verdict.output_records == len(orders.acks) > 0
    verdict.assert_exactly_once()
