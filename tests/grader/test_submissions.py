"""A Gradescope upload as students make it: two notebooks, a renamed lab, a script beside
it. The lab's notebook is chosen by what it is and the choice is said."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from grader.submissions import SubmissionError, resolve

pytestmark = [pytest.mark.grader, pytest.mark.unit]

EXERCISES = frozenset({"availability_gap", "truncated_records", "durable_settings"})


def _notebook(path: Path, sources: list[str], lab: str | None = None) -> Path:
    metadata = {"otter": {"assignment_name": lab}} if lab else {}
    cells = [{"cell_type": "code", "source": s, "metadata": {}, "outputs": []} for s in sources]
    path.write_text(json.dumps({"cells": cells, "metadata": metadata, "nbformat": 4}))
    return path


def test_the_notebook_whose_metadata_names_the_lab_is_graded(tmp_path: Path) -> None:
    lab = _notebook(
        tmp_path / "lab04 (1).ipynb",
        ["def availability_gap(h):\n    return 0"],
        "04-leader-failover",
    )
    scratch = _notebook(tmp_path / "scratch.ipynb", ["def durable_settings():\n    pass"] * 2)
    os.utime(scratch, (lab.stat().st_mtime + 60,) * 2)  # the scratch copy is newer
    (tmp_path / "lab04.py").write_text("def availability_gap(h):\n    return 1\n")
    chosen = resolve(tmp_path, "04-leader-failover", EXERCISES)
    assert chosen.path == lab
    assert chosen.note == (
        "graded lab04 (1).ipynb (its metadata names lab 04-leader-failover); "
        "not graded: lab04.py, scratch.ipynb"
    )


def test_without_metadata_the_notebook_defining_most_exercises_is_graded(tmp_path: Path) -> None:
    _notebook(tmp_path / "a.ipynb", ["def availability_gap(h):\n    return 0"])
    both = _notebook(
        tmp_path / "b.ipynb",
        ["def availability_gap(h):\n    return 0", "def durable_settings(): ..."],
    )
    chosen = resolve(tmp_path, "04-leader-failover", EXERCISES)
    assert chosen.path == both
    assert "it defines 2 of the lab's 3 exercises" in chosen.note


def test_a_script_alone_is_graded_and_nothing_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "answers.py").write_text("X = 1\n")
    (tmp_path / "notes.txt").write_text("hello")
    assert resolve(tmp_path, "04-leader-failover", EXERCISES).note == "graded answers.py"
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SubmissionError, match="no notebook"):
        resolve(empty)
