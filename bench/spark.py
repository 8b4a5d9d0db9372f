"""PySpark through Kafka-Lite: source throughput, micro-batch latency, recovery after a
driver kill, and the pipeline's peak memory (3 brokers, local[2]).

    .venv/bin/python -m bench.spark

1. **Source throughput**: a batch query reads 200,000 records of 1 KiB (3 partitions)
   and sums the value lengths; records/s of the whole query, JVM already running.
2. **Micro-batch latency**: the exactly-once copy pipeline (``kafkalite.spark.pipeline``)
   while a producer sends 1 KiB records (acks=all) at a lab's pace (``LAB_RATE``) and at
   1,000 records/s; each batch's ``triggerExecution`` time, p50 and p99 of 60 batches
   after the first three. The brokers' own work grows with the rate: at 200 records/s
   three Python brokers take about 1.5 of the machine's two cores, which Spark then lacks.
3. **Driver kill -> first batch after restart**: the copy pipeline as its own process,
   SIGKILLed after a committed batch and started again: seconds from the restart to the
   next commit in its checkpoint (JVM start included), median of 3; and of that, the
   seconds to a SparkSession and to the started query, as the pipeline prints them. At
   ``LAB_RATE`` and at 200 records/s.
4. **Peak memory**: the largest sum of RSS over the driver process group (Python driver,
   JVM, Python daemons and workers) and the three brokers over ten micro-batches of the
   running pipeline of 3 (before its first kill), and the largest sum of PSS (shared
   pages divided among the processes sharing them: Spark forks its Python workers from
   daemons, so the RSS sum counts their shared pages several times).

Spark's class-data sharing archive is built first if it is missing, as ``make bench`` and
``make up`` build it: the figures are those of the Spark a student runs. The load average
when the run ended is recorded with the figures: Spark starts a JVM and several Python
processes, so on a busy two-core machine these numbers move a lot.
"""

from __future__ import annotations

import contextlib
import os
import re
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil
from confluent_kafka import Producer
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import kafkalite.spark
from bench.common import bench_cluster, describe_or_run, record
from kafkalite.cluster import Cluster
from kafkalite.spark import class_archive
from kafkalite.spark.checkpoint import read_checkpoint
from kafkalite.spark.driver import DriverProcess
from kafkalite.spark.pipeline import copy_topic
from tests.support.topics import create_topic

RECORDS = 200_000
LATENCY_BATCHES = 60
STEADY_BATCHES = 10  # committed batches of a running pipeline whose memory is sampled
LAB_RATE = 20  # records/s: a lab's producer sends a few hundred records now and then
VALUE = b"x" * 1024


def fill(bootstrap: str, topic: str, count: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "acks": "all"})
    for i in range(count):
        while True:
            try:
                producer.produce(topic, VALUE, partition=i % 3)
                break
            except BufferError:
                producer.poll(0.01)
    producer.flush(120)


def source_throughput(spark: SparkSession, bootstrap: str) -> dict[str, float]:
    create_topic(bootstrap, "bench-in", 3, 3)
    fill(bootstrap, "bench-in", RECORDS)
    frame = (
        spark.read.format("kafkalite")
        .option("kafka.bootstrap.servers", bootstrap)
        .option("subscribe", "bench-in")
        .load()
    )
    frame.agg(F.count("*")).collect()  # warm: workers started
    started = time.monotonic()
    total = frame.agg(F.sum(F.length("value"))).collect()[0][0]
    seconds = time.monotonic() - started
    assert total == RECORDS * len(VALUE)
    rate = round(RECORDS / seconds)
    return {"records": RECORDS, "seconds": round(seconds, 2), "records_per_s": rate}


class Trickle:
    """``rate`` records/s of 1 KiB into ``topic`` until stopped."""

    def __init__(self, bootstrap: str, topic: str, rate: int) -> None:
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
        self.topic, self.rate = topic, rate
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        started, sent = time.monotonic(), 0
        while not self.stop.is_set():
            if sent < (time.monotonic() - started) * self.rate:
                self.producer.produce(self.topic, VALUE, partition=sent % 3)
                sent += 1
            else:
                self.producer.poll(0.005)
        self.producer.flush(30)


def batch_latency(spark: SparkSession, bootstrap: str, work: Path, rate: int) -> dict[str, float]:
    source, output = f"lat-in-{rate}", f"lat-out-{rate}"
    create_topic(bootstrap, source, 3, 3)
    create_topic(bootstrap, output, 3, 3)
    trickle = Trickle(bootstrap, source, rate)
    trickle.thread.start()
    query = copy_topic(spark, bootstrap, source, output, str(work / f"{source}-checkpoint"))

    def measured() -> list[float]:  # the first batches start Python workers: left out
        return sorted(
            p["durationMs"]["triggerExecution"] / 1000
            for p in query.recentProgress[3:]
            if p["numInputRows"]
        )

    deadline = time.monotonic() + 600  # 60 s on a quiet machine; longer on a busy one
    try:
        while len(measured()) < LATENCY_BATCHES and time.monotonic() < deadline:
            assert query.exception() is None, query.exception()
            time.sleep(1)
    finally:
        query.stop()
        trickle.stop.set()
        trickle.thread.join()
    durations = measured()
    assert durations, "no micro-batch with data finished in 600 s"
    return {
        "records_per_s": rate,
        "batches": len(durations),
        "p50_s": round(statistics.median(durations), 3),
        "p99_s": round(durations[int(len(durations) * 0.99) - 1], 3),
    }


def group_memory_mb(driver: DriverProcess, cluster: Cluster, pss: bool) -> tuple[float, float]:
    """RSS summed over the processes, and (if ``pss``) PSS summed: Spark forks its Python
    workers from daemons, so pages they share are counted once per process in the first
    sum and once in all in the second (the memory they really take). PSS reads every
    process's page map, which costs CPU: it is sampled less often."""
    pids = [cluster.pid(b.broker_id) for b in cluster.spec.brokers]
    if driver.process is not None and driver.process.poll() is None:
        with contextlib.suppress(psutil.NoSuchProcess):
            root = psutil.Process(driver.process.pid)
            pids += [root.pid, *(c.pid for c in root.children(recursive=True))]
    rss_sum = pss_sum = 0
    for pid in pids:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            process = psutil.Process(pid)
            if pss:
                info = process.memory_full_info()
                rss_sum, pss_sum = rss_sum + info.rss, pss_sum + info.pss
            else:
                rss_sum += process.memory_info().rss
    return rss_sum / 2**20, pss_sum / 2**20


def restart_after_kill(cluster: Cluster, work: Path, rate: int) -> dict[str, Any]:
    bootstrap = cluster.bootstrap_servers
    source, output = f"kill-in-{rate}", f"kill-out-{rate}"
    create_topic(bootstrap, source, 3, 3)
    create_topic(bootstrap, output, 3, 3)
    checkpoint = work / f"{source}-checkpoint"
    driver = DriverProcess(
        "kafkalite.spark.pipeline",
        ["--bootstrap", bootstrap, "--source", source, "--output", output,
         "--checkpoint", str(checkpoint)],
        log_dir=work / source,
        cwd=work,
    )  # fmt: skip
    trickle = Trickle(bootstrap, source, rate)
    trickle.thread.start()
    peak_rss = peak_pss = 0.0
    restarts: list[float] = []

    def wait_commit(after: int | None, sample: bool, timeout_s: float = 300) -> None:
        """Until a batch after ``after`` is committed; with ``sample``, the memory too."""
        nonlocal peak_rss, peak_pss
        deadline = time.monotonic() + timeout_s
        samples = 0
        while read_checkpoint(checkpoint).committed_batch == after:
            assert time.monotonic() < deadline, driver.log()[-2000:]
            if sample:
                rss, pss = group_memory_mb(driver, cluster, pss=samples % 10 == 0)
                samples += 1
                peak_rss, peak_pss = max(peak_rss, rss), max(peak_pss, pss)
            time.sleep(0.1 if sample else 0.02)

    phases: list[list[float]] = []
    try:
        driver.start()
        wait_commit(None, sample=False)
        # The memory of a running pipeline: Spark starts its Python daemons and workers
        # over the first batches; sampled over the next ones, not during the restarts
        # timed below (reading every process's page map would slow them).
        for _ in range(STEADY_BATCHES):
            wait_commit(read_checkpoint(checkpoint).committed_batch, sample=True)
        for _ in range(3):
            driver.kill()
            last = read_checkpoint(checkpoint).committed_batch
            started = time.monotonic()
            driver.start()
            wait_commit(last, sample=False)
            restarts.append(time.monotonic() - started)
            phases.append([float(s) for s in re.findall(r"after ([0-9.]+) s", driver.log())])
            wait_commit(read_checkpoint(checkpoint).committed_batch, sample=False)
    finally:
        driver.kill()
        trickle.stop.set()
        trickle.thread.join()
    return {
        "records_per_s": rate,
        "restart_to_first_batch_s": round(statistics.median(restarts), 1),
        "restarts_s": [round(r, 1) for r in restarts],
        "session_then_query_started_s": phases,
        "peak_rss_mb": round(peak_rss),
        "peak_pss_mb": round(peak_pss),
    }


def main() -> None:
    describe_or_run("bench.spark", __doc__)
    # Spark as make bench and make up run it: its JVM maps the class-data sharing
    # archive (without it a SparkSession took 18-22 s against 10-18 s on 2026-11-29)
    archive = class_archive.build()
    with bench_cluster(brokers=3) as cluster, tempfile.TemporaryDirectory() as tmp:
        spark = kafkalite.spark.session("bench")
        try:
            throughput = source_throughput(spark, cluster.bootstrap_servers)
            latency = [
                batch_latency(spark, cluster.bootstrap_servers, Path(tmp), rate)
                for rate in (LAB_RATE, 1000)
            ]
        finally:
            spark.stop()
        recovery = [restart_after_kill(cluster, Path(tmp), rate) for rate in (LAB_RATE, 200)]
    record(
        "spark",
        {
            "source": throughput,
            "micro_batch": latency,
            "driver_kill": recovery,
            "class_archive": str(archive),
            "load_average": [round(x, 2) for x in os.getloadavg()],
        },
    )


if __name__ == "__main__":
    main()
