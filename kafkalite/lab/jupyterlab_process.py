"""JupyterLab as ``kafkalite lab`` runs it: ``python -m kafkalite.lab.jupyterlab_process``
with JupyterLab's own arguments.

It is ``python -m jupyterlab`` but for its exit. Once the server has stopped (its kernels
shut down, its runtime files removed: ``ServerApp._cleanup`` runs before the event loop
ends), the process ends at once. Left to finalize, the interpreter's last garbage
collection walked every object JupyterLab had loaded for 3-6 s on this project's machine
(``py-spy dump --native``: ``gc_collect_main`` after the server's last log line), which was
most of what ``kafkalite down`` took on an idle lab.
"""

from __future__ import annotations

import logging
import os
import sys


def main() -> None:
    from jupyterlab.labapp import LabApp  # noqa: PLC0415  (only in this process)

    code = 0
    try:
        LabApp.launch_instance()
    except SystemExit as stopped:
        code = stopped.code if isinstance(stopped.code, int) else 1
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
