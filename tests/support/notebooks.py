"""What an executed notebook says went wrong (shared by the lab tests, the container tests,
which run the same labs inside a lab container, and ``scripts/lab_lessons.py``)."""

from __future__ import annotations

import os
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


def run_master(master: Path, cluster_root: str, budget_s: float) -> tuple[NotebookNode, float]:
    """Execute a master notebook top to bottom against the cluster in ``cluster_root``
    (found by its ``kafkalite.lab.connect()``), every cell even after an error; the
    executed notebook and how long it took."""
    notebook: NotebookNode = nbformat.read(master, as_version=4)  # type: ignore[no-untyped-call]
    client = NotebookClient(
        notebook,
        timeout=budget_s,
        kernel_name="python3",
        allow_errors=True,  # run every cell, then report every error at once
        resources={"metadata": {"path": str(master.parents[2] / "labs")}},
    )
    saved = os.environ.get(ENV_DIR)
    os.environ[ENV_DIR] = cluster_root  # the kernel inherits it
    started = time.monotonic()
    try:
        client.execute()
    finally:
        if saved is None:
            os.environ.pop(ENV_DIR, None)
        else:
            os.environ[ENV_DIR] = saved
    return notebook, time.monotonic() - started


@dataclass(frozen=True)
class LabRun:
    """One lab executed in one pass through the labs."""

    run: int  # 1 for the first pass
    master: Path
    notebook: NotebookNode
    elapsed_s: float
    problems: list[str]  # its errors and the lessons that did not hold; empty: it held


def labs_in_order(
    masters: list[Path],
    runs: int,
    cluster_root: str,
    budget_s: Callable[[str], float] = lab_budget_s,
) -> Iterator[LabRun]:
    """Run the labs ``runs`` times in order on one cluster, as a student does on the one
    ``make up`` cluster: each lab after the one before it, with what that lab left behind.
    A lab taking longer than its budget (``budget_s`` of its stem) is a problem of its own."""
    for run in range(1, runs + 1):
        for master in masters:
            budget = budget_s(master.stem)
            notebook, elapsed = run_master(master, cluster_root, budget)
            problems = notebook_errors(notebook) + lessons_not_held(notebook)
            if elapsed >= budget:
                problems.append(f"took {elapsed:.0f} s, over its budget of {budget:.0f} s")
            yield LabRun(run, master, notebook, elapsed, problems)
