"""The student's copies of the labs (kafkalite.lab.working_copy): missing labs are copied
in, a student's copy is never overwritten, and a reset keeps it aside."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkalite.lab.working_copy import KEPT_ASIDE, fill, main, reset

pytestmark = pytest.mark.unit


@pytest.fixture
def shipped(tmp_path: Path) -> Path:
    labs = tmp_path / "labs"
    labs.mkdir()
    for name in ("01-topics.ipynb", "04-failover.ipynb"):
        (labs / name).write_text(f"shipped {name}")
    return labs


def test_missing_labs_are_copied_in_and_a_students_copy_is_kept(
    shipped: Path, tmp_path: Path
) -> None:
    work = tmp_path / "my-labs"
    assert fill(shipped, work) == ["01-topics.ipynb", "04-failover.ipynb"]
    (work / "04-failover.ipynb").write_text("my answers")
    (work / "01-topics.ipynb").unlink()
    assert fill(shipped, work) == ["01-topics.ipynb"]
    assert (work / "04-failover.ipynb").read_text() == "my answers"


def test_a_reset_puts_the_shipped_lab_back_and_keeps_the_students_aside(
    shipped: Path, tmp_path: Path
) -> None:
    work = tmp_path / "my-labs"
    fill(shipped, work)
    (work / "04-failover.ipynb").write_text("my answers")
    names, aside = reset(shipped, work, ["04"])
    assert names == ["04-failover.ipynb"]
    assert (work / "04-failover.ipynb").read_text() == "shipped 04-failover.ipynb"
    assert aside.parent == work / KEPT_ASIDE
    assert (aside / "04-failover.ipynb").read_text() == "my answers"
    assert not (aside / "01-topics.ipynb").exists()


def test_a_reset_of_no_such_lab_says_so(
    shipped: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(shipped), str(tmp_path / "w"), "--reset", "99"]) == 1
    assert capsys.readouterr().err.startswith("error: no lab in")
