"""What an executed notebook says went wrong (shared by the lab tests and the container
tests, which run the same labs inside a lab container)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbformat import NotebookNode

from kafkalite.lab.connection import ENV_DIR
from kafkalite.lab.prediction import MISMATCH_MARK


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
