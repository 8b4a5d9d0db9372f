"""Which cluster a command or a notebook means, decided in this one place.

Inside the course stack's lab container (``KAFKALITE_BACKEND=docker``, set by
``docker-compose.yml``) it is the stack's broker containers, driven by the Docker backend;
anywhere else it is the local cluster whose ``cluster.json`` is in the given directory.
The CLI and ``kafkalite.lab.connect()`` both ask here, so ``kafkalite status`` in the lab's
terminal and a notebook see the same brokers.
"""

from __future__ import annotations

import os
from pathlib import Path

from kafkalite.cluster.spec import ClusterError
from kafkalite.cluster.supervisor import Cluster

BACKEND_ENV = "KAFKALITE_BACKEND"


def in_course_stack() -> bool:
    return os.environ.get(BACKEND_ENV, "local") == "docker"


def attach(root: Path) -> Cluster:
    """The running cluster this environment means (``root`` is the local cluster's dir)."""
    if in_course_stack():
        from kafkalite.cluster.docker_backend import attach_stack  # noqa: PLC0415  (the SDK loads only here)

        return attach_stack()
    return Cluster.attach(root)


def refuse_up_in_course_stack() -> None:
    """``up`` would start a second cluster beside the course's: say what to do instead."""
    if in_course_stack():
        raise ClusterError(
            "this is the course stack's lab container: its brokers are the broker-1..3 "
            "containers (`kafkalite status` shows them; `kafkalite start N` starts a "
            "stopped one)"
        )
