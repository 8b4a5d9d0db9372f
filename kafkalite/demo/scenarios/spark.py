"""The exactly-once Spark pipeline survives a driver kill (Kafka Reliability, "Exactly-Once
Semantics: consumer side": the output and the input's offsets saved together).

Lab 09's pipeline (``python -m kafkalite.spark.pipeline``) copies ``orders`` to
``orders-copy`` in a driver process of its own while orders keep coming. Each task of a
micro-batch writes its records in one Kafka transaction and commits the batch id in the
same transaction; the query's checkpoint keeps each batch's planned offsets. The driver,
its JVM and its Python workers are SIGKILLed while a batch is planned but not committed;
the restarted driver replays that batch: its new producers fence the old ones (whose
open transactions are aborted), and a task whose batch id is already committed writes
nothing again. The copy, read with read_committed, holds every order once.
"""

from __future__ import annotations

import importlib.util
import shutil
import tempfile
import time
from pathlib import Path

from kafkalite.demo.catalog import scenario_info
from kafkalite.demo.scenario import BackgroundWrites, Scenario
from kafkalite.demo.steps import Outcome, Step
from kafkalite.events import EventType
from kafkalite.lab.recording import read_final_log
from kafkalite.spark.checkpoint import read_checkpoint
from kafkalite.spark.driver import DriverProcess

if importlib.util.find_spec("pyspark") is None:  # the presenter says so in one line
    raise ImportError("pyspark is not installed (pip install 'kafkalite[spark]', and Java 17)")

SOURCE = "orders"
COPY = "orders-copy"
PARTITIONS = 2
"""Two partitions, so two tasks (two transactions) a batch, and the copy's strips fit
the projector beside the words."""
RATE = 20
"""Orders a second: a micro-batch every half second holds about ten."""
START_TIMEOUT_S = 120.0
"""A JVM's start, a SparkSession and the first batch, on a loaded two-core machine."""
POLL_S = 0.02
"""How often the checkpoint is read while waiting for a batch to be planned: a batch of
ten orders runs for a few tenths of a second."""


class Spark(Scenario):
    info = scenario_info("spark")
    topics = frozenset({COPY})

    def prepare(self) -> None:
        for topic in (SOURCE, COPY):
            self.lab.create_topic(topic, PARTITIONS, 3, configs={"min.insync.replicas": "2"})
        self.work = Path(tempfile.mkdtemp(prefix="kafkalite-demo-spark-"))
        self.checkpoint = self.work / "checkpoint"
        self.driver = DriverProcess(
            "kafkalite.spark.pipeline",
            ["--bootstrap", self.lab.live_bootstrap_servers(), "--source", SOURCE,
             "--output", COPY, "--checkpoint", str(self.checkpoint)],
            log_dir=self.work / "logs",
            cwd=self.work,
        )  # fmt: skip
        self.producer = self.lab.producer(acks="all")
        self.writes: BackgroundWrites | None = None
        self.killed_at = 0.0

    def steps(self) -> list[Step]:
        return [
            Step("Orders arrive 20 a second; a Spark driver (a process with its JVM) copies "
                 "them to orders-copy, each task's records in one Kafka transaction.",
                 self.start_the_pipeline),
            Step("We kill the driver with SIGKILL in the middle of a micro-batch, orders "
                 "still coming. After the restart, is any order in the copy twice? Missing?"),
            Step("The driver, its JVM and its workers are killed while a batch is planned, "
                 "not committed.", self.kill_the_driver),
            Step("The driver starts again from its checkpoint and replays the batch.",
                 self.restart_the_driver),
            Step("The verdict: the copy, read with read_committed, against every "
                 "acknowledged order.", self.judge),
        ]  # fmt: skip

    def start_the_pipeline(self) -> Outcome:
        self.writes = self.write_in_background(self.producer, SOURCE, rate=RATE, prefix="order")
        started = time.monotonic()
        self.driver.start()
        self._wait_for_a_commit(after=None)
        batch = read_checkpoint(self.checkpoint).committed_batch
        return Outcome(
            f"The driver started and committed micro-batch {batch} "
            f"{time.monotonic() - started:.0f} s later; the copy holds "
            f"{len(self._copy())} orders.",
        )

    def kill_the_driver(self) -> Outcome:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not read_checkpoint(self.checkpoint).replay_pending:
            self._check_running(deadline)
            time.sleep(POLL_S)
        self.driver.kill()
        self.killed_at = time.time()
        state = read_checkpoint(self.checkpoint)
        planned, committed = state.planned.get(SOURCE, {}), state.committed.get(SOURCE, {})
        spans = ", ".join(
            f"{SOURCE}-{p} {committed.get(p, 0)}-{end - 1}"
            for p, end in sorted(planned.items())
            if end > committed.get(p, 0)
        )
        return Outcome(
            f"Killed during micro-batch {state.planned_batch}: the checkpoint has its "
            f"offsets ({spans}), not its commit. Its transactions on {COPY} may be open, "
            "or already committed.",
            facts=(("replay-pending", str(state.replay_pending).lower()),),
        )

    def restart_the_driver(self) -> Outcome:
        last = read_checkpoint(self.checkpoint).committed_batch
        started = time.monotonic()
        self.driver.start()
        self._wait_for_a_commit(after=last)
        took = time.monotonic() - started
        since_ms = self.killed_at * 1000
        fenced = [e for e in self.events(EventType.PRODUCER_FENCED) if e["time_ms"] >= since_ms]
        aborted = [e for e in self.events(EventType.TXN_ABORTED) if e["time_ms"] >= since_ms]
        return Outcome(
            f"The restarted driver committed micro-batch {last + 1 if last is not None else 0} "
            f"{took:.1f} s after its start: its producers fenced {len(fenced)} of the old "
            f"ones, {len(aborted)} open transaction{'s' if len(aborted) != 1 else ''} "
            "aborted.",
            facts=(("restart-s", f"{took:.1f}"),),
        )

    def judge(self) -> Outcome:
        sent = self.writes.stop() if self.writes is not None else 0
        acked = {a.value for a in self.history.acks()}
        deadline = time.monotonic() + START_TIMEOUT_S
        copy = self._copy()
        while not acked <= set(copy):
            self._check_running(deadline)
            time.sleep(0.2)
            copy = self._copy()
        self.driver.kill()
        result = self.lab.check(self.history, output=copy)
        return self.verdict(
            result,
            "orders copied by Spark, driver killed",
            kills=[(self.killed_at, "driver killed")],
            text=f"{sent} orders sent; the copy holds {len(copy)} records, "
            f"{len(set(copy))} different.",
            facts=(("copies", str(len(copy))), ("different", str(len(set(copy))))),
        )

    def close(self) -> None:
        super().close()
        driver = getattr(self, "driver", None)
        if driver is not None:
            driver.kill()
            shutil.rmtree(self.work, ignore_errors=True)

    # ---- reading -----------------------------------------------------------------------

    def _wait_for_a_commit(self, after: int | None) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while read_checkpoint(self.checkpoint).committed_batch == after:
            self._check_running(deadline)
            time.sleep(0.1)

    def _check_running(self, deadline: float) -> None:
        if not self.driver.running:
            raise RuntimeError(f"the driver exited: {self.driver.log()[-300:]}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"no micro-batch in {START_TIMEOUT_S:.0f} s")

    def _copy(self) -> list[bytes]:
        """The copy as a read_committed consumer reads it now, partition by partition:
        each partition of the copy holds its source partition's orders in order."""
        log = read_final_log(
            self.lab.live_bootstrap_servers(),
            [(COPY, p) for p in range(PARTITIONS)],
            isolation_level="read_committed",
        )
        return [value for p in sorted(log) for _, value in sorted(log[p].items())]


SCENARIO = Spark
