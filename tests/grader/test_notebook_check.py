"""A student's ``grader.check`` grades the public cases the way the autograder does, on a
private cluster: the student's own cluster keeps its topics, its brokers and its events
as they were (item 7 of issue 24). Run in a real kernel, from the lab's folder, as a
student runs it."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from kafkalite.cluster import Cluster
from kafkalite.lab.connection import ENV_DIR
from kafkalite.lab.faults import ObservedCluster
from kafkalite.lab.lab import Lab
from tests.support.notebooks import notebook_errors

pytestmark = [pytest.mark.grader, pytest.mark.slow]

LABS = Path(__file__).resolve().parents[2] / "labs"
CELLS = [
    'from grader.notebook import Notebook\n\ngrader = Notebook("04-leader-failover")',
    "def durable_settings():\n    return {'acks': 1}, {'min.insync.replicas': '1'}",
    'first = grader.check("durable_settings")\nprint(first)',
    "def durable_settings():\n    return {'acks': 'all'}, {'min.insync.replicas': '2'}",
    'second = grader.check("durable_settings")\nprint(second)',
]


@pytest.mark.timeout(900)
def test_a_check_grades_on_a_private_cluster_and_leaves_the_students_alone(
    cluster3: Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_DIR, cluster3.spec.root)  # the student's cluster, as `make up` sets it
    students = Lab(ObservedCluster.attach(Path(cluster3.spec.root)))
    topics_before = set(students.partitions()["topic"])
    events_before = len(students.cluster.events())
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(LABS)}}
    ).execute()
    assert notebook_errors(notebook) == []
    first = notebook.cells[2].outputs[0]["text"]
    second = notebook.cells[4].outputs[0]["text"]
    assert first.startswith("durable_settings: not yet"), first
    assert "lost" in first and "acknowledged writes when the leader was isolated" in first
    assert second.startswith("durable_settings: all public tests passed"), second
    assert set(students.partitions()["topic"]) == topics_before
    new_events = students.cluster.events()[events_before:]
    faults = [e for e in new_events if e["type"] in ("broker_fenced", "leader_elected")]
    assert faults == [], faults
    assert all(s.value == "running" for s in students.cluster.broker_states().values())
