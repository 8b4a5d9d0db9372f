"""Every lab runs top to bottom with the reference answers, three times in order on one
cluster, and its printed lessons hold every time (issue 25, item 5).

The master notebooks (``grader/masters/``) hold the reference solutions, the reference
predictions before each fault step, and every test, public and hidden, as plain cells:
executing a master with nbclient runs the lab as a student who solved it would, and then
checks the solutions the way the grader will. Each fault step prints the prediction beside
what the cluster did (``lab.beside``); a row where they differ is a lesson that did not
hold. The labs run as a student runs them: in order 01 -> last on the one three-broker
cluster ``make up`` starts (no test settings), each lab after what the one before left
behind, and then again from 01. ``scripts/lab_lessons.py --runs 20`` is the long version.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkalite.cluster import Cluster
from tests.support.notebooks import lab_budget_s, labs_in_order
from tests.support.ports import free_base_port

pytestmark = [pytest.mark.lessons, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
MASTERS = sorted((ROOT / "grader" / "masters").glob("*.ipynb"))
RUNS = 3


@pytest.fixture
def lab_cluster(tmp_path: Path) -> Iterator[Cluster]:
    """A cluster as ``make up`` starts it: three brokers and the lab's default settings."""
    cluster = Cluster.up(tmp_path / "cluster", brokers=3, base_port=free_base_port(3))
    try:
        yield cluster
    finally:
        cluster.down()


@pytest.mark.timeout(RUNS * sum(lab_budget_s(m.stem) + 60 for m in MASTERS))
def test_every_lab_three_times_in_order_on_one_cluster(
    lab_cluster: Cluster, tmp_path: Path
) -> None:
    failed: list[str] = []
    logs = tmp_path / "client-logs"  # a failed lab's kafka-python DEBUG log (pytest keeps it)
    for lab in labs_in_order(MASTERS, RUNS, str(lab_cluster.spec.root), client_logs=logs):
        print(f"run {lab.run} {lab.master.stem}: {lab.elapsed_s:.0f} s")  # with -s or on failure
        failed += [f"run {lab.run} {lab.master.stem}: {problem}" for problem in lab.problems]
        if lab.client_log is not None:
            failed.append(f"run {lab.run} {lab.master.stem}: client log {lab.client_log}")
    assert not failed, "labs that failed or whose lesson did not hold:\n" + "\n".join(failed)
