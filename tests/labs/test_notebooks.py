"""Every lab runs top to bottom with the reference answers, against a fresh cluster.

The master notebooks (``grader/masters/``) hold the reference solutions and every test,
public and hidden, as plain cells: executing a master with nbclient runs the lab as a
student who solved it would, and then checks the solutions the way the grader will. Each
lab gets its own three-broker cluster on free ports, found by the notebook's
``kafkalite.lab.connect()`` through ``KAFKALITE_DIR``, and must finish in its budget.
``test_lessons.py`` also runs them all three times in order on one cluster (on demand:
``scripts/test_suite.py lessons``). The student versions in ``labs/`` must be what
``make labs`` makes of the masters today.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest

from grader import assignments
from kafkalite.cluster import Cluster
from tests.support.notebooks import lab_budget_s, lessons_not_held, notebook_errors, run_master

pytestmark = [pytest.mark.labs, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
MASTERS = sorted((ROOT / "grader" / "masters").glob("*.ipynb"))


@pytest.mark.parametrize(
    "master",
    [pytest.param(m, marks=pytest.mark.timeout(lab_budget_s(m.stem) + 180)) for m in MASTERS],
    ids=lambda path: path.stem,
)
def test_lab_runs_top_to_bottom_with_the_reference_answers(
    master: Path, make_cluster3: Callable[..., Cluster]
) -> None:
    cluster = make_cluster3()
    budget_s = lab_budget_s(master.stem)
    notebook, elapsed = run_master(master, str(cluster.spec.root), budget_s)
    print(f"{master.name}: {elapsed:.0f} s")  # shown with -s or on failure
    assert elapsed < budget_s, f"{master.name} took {elapsed:.0f} s"
    errors = notebook_errors(notebook)
    assert not errors, "\n".join(errors)
    not_held = lessons_not_held(notebook)
    assert not not_held, "a lesson did not hold (reference prediction != observed):\n" + "\n".join(
        not_held
    )


def test_student_versions_are_built_from_the_masters() -> None:
    """``labs/`` holds what ``python -m grader assign`` (``make labs``) makes of the masters."""
    assert sorted(p.name for p in (ROOT / "labs").glob("*.ipynb")) == [m.name for m in MASTERS]
    for master in MASTERS:
        committed = ROOT / "labs" / master.name
        built = assignments.student_version(assignments.split(master))
        assert built == committed.read_text(), f"labs/{master.name} is out of date: make labs"
        student = nbformat.read(committed, as_version=4)
        assert all(not cell.get("outputs") for cell in student.cells if cell.cell_type == "code"), (
            f"labs/{master.name} must be committed with its outputs cleared"
        )
        assert "BEGIN SOLUTION" not in nbformat.writes(student)
