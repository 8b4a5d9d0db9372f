"""The tree a benchmark compares with: a git worktree of an older commit, and clusters
started by that tree's own code, so that two versions of Kafka-Lite run side by side in
one run on one machine (``bench.requests``, ``bench.replication --baseline``)."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from bench.common import sigterm_unwinds
from kafkalite.cluster import Cluster
from tests.support.ports import free_base_port

BASELINE = "5cb7594"
"""main when issue 29 began: the column every change is measured against."""
REPO = Path(__file__).resolve().parent.parent


def short_commit(commit: str) -> str:
    """``commit`` as git abbreviates it."""
    return git("rev-parse", "--short", commit)


def current_commit() -> str:
    """This tree's commit, ``-dirty`` when it has changes."""
    return git("describe", "--always", "--dirty")


def git(*args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(REPO), *args], check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


@contextlib.contextmanager
def worktree(commit: str) -> Iterator[Path]:
    """A detached git worktree of ``commit``, removed afterwards."""
    with sigterm_unwinds(), tempfile.TemporaryDirectory(prefix="kafkalite-baseline-") as tmp:
        path = Path(tmp) / "tree"
        git("worktree", "add", "--detach", str(path), commit)
        try:
            yield path
        finally:
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "remove", "--force", str(path)],
                check=False,
                capture_output=True,
            )


@contextlib.contextmanager
def cluster_of(
    tree: Path, brokers: int = 3, configs: dict[str, str] | None = None
) -> Iterator[Cluster]:
    """A cluster whose brokers run ``tree``'s code: ``tree``'s own ``Cluster.up`` starts
    it, in a Python whose working directory is ``tree`` (the package is imported from
    there), since how brokers are launched changes between commits too. This process
    attaches to it: signals and ``/state`` are the same for every version."""
    with sigterm_unwinds(), tempfile.TemporaryDirectory(prefix="kafkalite-bench-") as tmp:
        start = (
            "import json, sys; from pathlib import Path; from kafkalite.cluster import Cluster; "
            "Cluster.up(Path(sys.argv[1]), brokers=int(sys.argv[2]), base_port=int(sys.argv[3]), "
            "configs=json.loads(sys.argv[4]))"
        )
        port = free_base_port(brokers)
        subprocess.run(
            [sys.executable, "-c", start, tmp, str(brokers), str(port), json.dumps(configs or {})],
            cwd=tree,
            check=True,
        )
        cluster = Cluster.attach(Path(tmp))
        try:
            yield cluster
        finally:
            cluster.down()
