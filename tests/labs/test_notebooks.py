"""The student versions in ``labs/`` are what ``make labs`` makes of the masters today.

The labs themselves are executed top to bottom, three times in order on one cluster, by
``test_lessons.py``.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from grader import assignments

pytestmark = [pytest.mark.labs]

ROOT = Path(__file__).resolve().parents[2]
MASTERS = sorted((ROOT / "grader" / "masters").glob("*.ipynb"))


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
