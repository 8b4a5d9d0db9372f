"""Run inside a lab container: execute one notebook top to bottom, as a student's kernel
would (working directory: the labs folder), and print a JSON report for the host-side
test: how long it took and every cell's error."""

from __future__ import annotations

import json
import sys
import time

import nbformat
from nbclient import NotebookClient

from tests.support.notebooks import notebook_errors

LABS = "/home/kafkalite/labs"


def main(path: str, timeout_s: int) -> None:
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=timeout_s,
        kernel_name="python3",
        allow_errors=True,  # every cell runs; the report lists every error
        resources={"metadata": {"path": LABS}},
    )
    started = time.monotonic()
    client.execute()
    errors = notebook_errors(notebook)
    print(json.dumps({"seconds": round(time.monotonic() - started, 1), "errors": errors}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
