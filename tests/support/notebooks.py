"""What an executed notebook says went wrong (shared by the lab tests, the container tests,
which run the same labs inside a lab container, and ``scripts/lab_lessons.py``)."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbformat import NotebookNode

from kafkalite.lab.connection import ENV_DIR
from kafkalite.lab.prediction import MISMATCH_MARK

LAB_BUDGET_S = 120
# Lab 09 starts three JVMs (Spark in the kernel, then a driver process, killed and started
# again): 66 s on a quiet machine, but each JVM start stretches most under the suite's load.
# Lab 10 puts four failure stories (about 10 s each, a broker started twice in each) and a
# network partition through the cluster: 83 s at load 5, 111 s at load 9.
LAB_BUDGETS_S = {"09-pyspark-exactly-once": 240, "06-consumer-groups": 240, "10-trade-offs": 180}


def lab_budget_s(stem: str) -> float:
    """How long the lab named ``stem`` may take on the suite's loaded machine."""
    return LAB_BUDGETS_S.get(stem, LAB_BUDGET_S)


def notebook_errors(notebook: NotebookNode) -> list[str]:
    """``cell N: Name: message`` for every error output of an executed notebook."""
    return [
        f"cell {index}: {output['ename']}: {output['evalue']}"
        for index, cell in enumerate(notebook.cells)
        if cell.cell_type == "code"
        for output in cell.outputs
        if output.get("output_type") == "error"
    ]


def lessons_not_held(notebook: NotebookNode) -> list[str]:
    """``cell N: <row>`` for every prediction row of an executed notebook that disagrees
    with what the cluster did. In a master the predictions are the reference answers, so
    each such row is a lesson the lab prints that did not hold in this run."""
    return [
        f"cell {index}: {line.strip()}"
        for index, cell in enumerate(notebook.cells)
        if cell.cell_type == "code"
        for output in cell.outputs
        for line in output.get("data", {}).get("text/plain", output.get("text", "")).splitlines()
        if MISMATCH_MARK in line
    ]


CLIENT_LOG_ENV = "KAFKALITE_CLIENT_LOG"
CLIENT_LOG_STARTUP = f"""
import logging, os
if os.environ.get({CLIENT_LOG_ENV!r}):
    _handler = logging.FileHandler(os.environ[{CLIENT_LOG_ENV!r}])
    _handler.setFormatter(
        logging.Formatter("%(asctime)s %(threadName)s %(name)s %(levelname)s %(message)s")
    )
    logging.getLogger("kafka").setLevel(logging.DEBUG)
    logging.getLogger("kafka").addHandler(_handler)
"""
"""An IPython start-up file: the kernel writes kafka-python's DEBUG log to the file its
environment names, so a lab step that fails once in many runs says which broker each
request went to and what came back (the brokers' own logs cannot: they never saw it)."""


def run_master(
    master: Path, cluster_root: str, budget_s: float, client_log: Path | None = None
) -> tuple[NotebookNode, float]:
    """Execute a master notebook top to bottom against the cluster in ``cluster_root``
    (found by its ``kafkalite.lab.connect()``), every cell even after an error; the
    executed notebook and how long it took. With ``client_log``, the kernel writes
    kafka-python's DEBUG log there (``CLIENT_LOG_STARTUP``)."""
    notebook: NotebookNode = nbformat.read(master, as_version=4)  # type: ignore[no-untyped-call]
    client = NotebookClient(
        notebook,
        timeout=budget_s,
        kernel_name="python3",
        allow_errors=True,  # run every cell, then report every error at once
        resources={"metadata": {"path": str(master.parents[2] / "labs")}},
    )
    environment = {ENV_DIR: cluster_root}  # the kernel inherits it
    with tempfile.TemporaryDirectory(prefix="ipython-") as ipython_dir:
        if client_log is not None:
            startup = Path(ipython_dir) / "profile_default" / "startup"
            startup.mkdir(parents=True)
            (startup / "00-client-log.py").write_text(CLIENT_LOG_STARTUP)
            environment |= {"IPYTHONDIR": ipython_dir, CLIENT_LOG_ENV: str(client_log)}
        saved = {name: os.environ.get(name) for name in environment}
        os.environ.update(environment)
        started = time.monotonic()
        try:
            client.execute()
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
    return notebook, time.monotonic() - started


@dataclass(frozen=True)
class LabRun:
    """One lab executed in one pass through the labs."""

    run: int  # 1 for the first pass
    master: Path
    notebook: NotebookNode
    elapsed_s: float
    problems: list[str]  # its errors and the lessons that did not hold; empty: it held
    client_log: Path | None  # kafka-python's DEBUG log, kept only for a run that failed


def labs_in_order(
    masters: list[Path],
    runs: int,
    cluster_root: str,
    budget_s: Callable[[str], float] = lab_budget_s,
    client_logs: Path | None = None,
) -> Iterator[LabRun]:
    """Run the labs ``runs`` times in order on one cluster, as a student does on the one
    ``make up`` cluster: each lab after the one before it, with what that lab left behind.
    A lab taking longer than its budget (``budget_s`` of its stem) is a problem of its own.
    With ``client_logs`` (a folder), a failed lab run's kafka-python DEBUG log is kept there
    as ``run-N-<lab>.log``."""
    for run in range(1, runs + 1):
        for master in masters:
            budget = budget_s(master.stem)
            log = None if client_logs is None else client_logs / f"run-{run}-{master.stem}.log"
            if log is not None:
                log.parent.mkdir(parents=True, exist_ok=True)
            notebook, elapsed = run_master(master, cluster_root, budget, log)
            problems = notebook_errors(notebook) + lessons_not_held(notebook)
            if elapsed >= budget:
                problems.append(f"took {elapsed:.0f} s, over its budget of {budget:.0f} s")
            if log is not None and not problems:
                log.unlink(missing_ok=True)
                log = None
            yield LabRun(run, master, notebook, elapsed, problems, log)
