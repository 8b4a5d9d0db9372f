"""A batch goes on past a submission whose grading broke: that one gets a row saying why,
the others their grades (a batch of 20 once stopped after 19 minutes on one
``SystemError`` from CPython's ``ast.parse`` in a grading thread, cpython gh-106905)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from otter.test_files import GradingResults

from grader import batch, extract
from grader.assignments import Assignment

pytestmark = [pytest.mark.grader, pytest.mark.unit]


def test_a_grading_that_breaks_costs_its_own_row_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = [tmp_path / "alice.py", tmp_path / "bob.py"]
    for entry in entries:
        entry.write_text("def double(x):\n    return 2 * x\n")

    def grade(test_files: list[Path], submission: Path, options: Any) -> GradingResults:
        if submission.name == "alice.py":  # the race cannot be started on demand: raised here
            raise SystemError("AST constructor recursion depth mismatch (before=33, after=28)")
        return GradingResults([])

    monkeypatch.setattr(batch, "grade", grade)
    assignment = Assignment(tmp_path / "00-toy.ipynb", tmp_path / "student.ipynb", [])
    rows = batch.grade_all(assignment, entries, options=None, jobs=2)  # type: ignore[arg-type]
    assert [r.submission for r in rows] == ["alice.py", "bob.py"]
    assert rows[0].error == (
        "grading broke: SystemError: AST constructor recursion depth mismatch (before=33, after=28)"
    )
    assert rows[1].error == ""


def test_a_notebook_that_is_not_an_object_is_said_so() -> None:
    assert extract.from_notebook([1, 2]).problems == ["the notebook has no cells"]
