"""The notebook side of Kafka-Lite: ``lab = kafkalite.lab.connect()``.

``connect()`` finds the lab cluster (the one ``kafkalite lab`` started, through
``KAFKALITE_DIR``; else the nearest ``.kafkalite/``) or starts one, and returns a
:class:`~kafkalite.lab.lab.Lab`. This package is a client of the cluster's public surfaces
only (``kafkalite.cluster.Cluster``, ``/state``, ``/events``, real Kafka clients and
``kafkalite.checker``). Its heavy modules (pandas, matplotlib, kafka-python) load on first
use, so ``kafkalite down`` can stop JupyterLab without importing them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kafkalite.lab.lab import Lab

__all__ = ["connect"]


def connect(dir: str | Path | None = None) -> Lab:
    """The lab cluster as a :class:`Lab`: the one in ``dir``, in ``$KAFKALITE_DIR``, or the
    nearest ``.kafkalite/`` from the working directory up; started if it is not running."""
    from kafkalite.lab.connection import find_cluster_dir, open_cluster  # noqa: PLC0415
    from kafkalite.lab.lab import Lab  # noqa: PLC0415

    return Lab(open_cluster(find_cluster_dir(dir)))
