"""How a notebook finds its cluster, and the one place the cluster backend is chosen.

``kafkalite lab`` starts JupyterLab with ``KAFKALITE_DIR`` set to the cluster it started,
so every notebook kernel finds that cluster whatever its working directory (the labs run
in ``labs/``, the cluster lives in ``.kafkalite/`` beside it). Without the variable a
notebook looks for ``.kafkalite/`` in its working directory and each parent, as git finds
``.git``; with nothing found it starts a cluster there. Tests point notebooks at a fresh
cluster on free ports through the same variable.
"""

from __future__ import annotations

import os
from pathlib import Path

from kafkalite.cluster import BrokerState, ClusterBackend, ClusterError
from kafkalite.cluster.local import LocalProcessBackend
from kafkalite.cluster.spec import SPEC_FILE
from kafkalite.lab.faults import ObservedCluster

ENV_DIR = "KAFKALITE_DIR"
ENV_BACKEND = "KAFKALITE_BACKEND"
DEFAULT_DIR_NAME = ".kafkalite"
LAB_BROKERS = 3
LAB_BASE_PORT = 9092
UP = (BrokerState.RUNNING, BrokerState.PAUSED, BrokerState.ISOLATED)


def cluster_backend() -> ClusterBackend:
    """The backend every lab cluster is driven through, chosen by ``KAFKALITE_BACKEND``.

    This is the only place the choice is made: the CLI's ``lab`` command, ``connect()``
    and the tests all come through here, so a new backend is one more branch.
    """
    name = os.environ.get(ENV_BACKEND, "local")
    if name == "local":
        return LocalProcessBackend()
    if in_course_stack():
        from kafkalite.cluster.docker_backend import DockerBackend  # noqa: PLC0415  (loads the SDK)

        return DockerBackend.from_environment()
    raise ClusterError(f"unknown {ENV_BACKEND}={name!r} (known: local, docker)")


def in_course_stack() -> bool:
    """In the lab container of ``docker-compose.yml`` (it sets ``KAFKALITE_BACKEND=docker``):
    the brokers are the stack's containers, which compose started and a notebook attaches to."""
    return os.environ.get(ENV_BACKEND) == "docker"


def attach_cluster(root: Path) -> ObservedCluster:
    """The running cluster, through the chosen backend: the one ``root`` describes, or in the
    course stack its broker containers (``root`` then plays no part)."""
    backend = cluster_backend()
    if in_course_stack():
        from kafkalite.cluster.docker_backend import stack_spec  # noqa: PLC0415

        return ObservedCluster(stack_spec(), backend)
    return ObservedCluster.attach(root, backend)


def find_cluster_dir(explicit: str | Path | None = None, cwd: Path | None = None) -> Path:
    """Where the lab cluster lives: ``explicit``, else ``$KAFKALITE_DIR``, else the nearest
    ``.kafkalite/`` holding a cluster in ``cwd`` or a parent, else ``cwd/.kafkalite``."""
    if explicit is not None:
        return Path(explicit).resolve()
    from_env = os.environ.get(ENV_DIR)
    if from_env:
        return Path(from_env).resolve()
    here = (cwd or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / DEFAULT_DIR_NAME / SPEC_FILE).exists():
            return folder / DEFAULT_DIR_NAME
    return here / DEFAULT_DIR_NAME


def open_cluster(
    root: Path,
    brokers: int = LAB_BROKERS,
    base_port: int = LAB_BASE_PORT,
    configs: dict[str, str] | None = None,
) -> ObservedCluster:
    """Reuse the cluster in ``root`` if any broker of it runs; start it again (same ports,
    same cluster id, same settings) if all are down; start a new one if there is none.

    Brokers a student stopped on purpose stay stopped: ``Lab.reset()`` brings them back.
    In the course stack there is nothing to start: the brokers are its containers.
    """
    if in_course_stack():
        return attach_cluster(root)
    backend = cluster_backend()
    if (root / SPEC_FILE).exists():
        cluster = ObservedCluster.attach(root, backend)
        if any(state in UP for state in cluster.broker_states().values()):
            return cluster
        spec = cluster.spec
        return ObservedCluster.up(
            root,
            brokers=len(spec.brokers),
            base_port=spec.brokers[0].port,
            configs=spec.configs,
            backend=backend,
        )
    return ObservedCluster.up(
        root, brokers=brokers, base_port=base_port, configs=configs or {}, backend=backend
    )
