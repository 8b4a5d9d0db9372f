"""A lab's master splits into one OK-format test file per graded question."""

from __future__ import annotations

from pathlib import Path

import pytest
from otter.test_files import create_test_file

from grader import assignments

pytestmark = [pytest.mark.grader]


def test_each_auto_graded_question_of_a_lab_becomes_a_test_file(tmp_path: Path) -> None:
    assignment = assignments.split(assignments.find_master("01"), cache=tmp_path)
    assert assignment.test_files, "the master's questions were not written out"
    for path in assignment.test_files:
        test_file = create_test_file(str(path), nbmeta_config=None)
        assert test_file.name == path.stem
        assert test_file.test_cases, f"{path.stem} has no cases"


def test_an_unknown_lab_names_the_labs_there_are() -> None:
    with pytest.raises(assignments.AssignmentError, match="01-topics-partitions"):
        assignments.find_master("42")
