"""A crash-searched case passes only if its search killed the run somewhere: a search
that reached none of its crash points judged no crash, and says so instead of passing
quietly. Graded without a cluster (the question's durable steps are file writes), so
each grading costs only sandbox forks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from grader.runner import GradingOptions, grade
from grader.student import SearchOptions

pytestmark = pytest.mark.grader

SUBMISSIONS = Path(__file__).parent / "submissions"
SAVE_TEST = '''from otter.test_files import test_case

OK_FORMAT = False

name = "save"
points = 1

@test_case(points=1, hidden=False)
def test_every_value_saved_once_across_a_crash(student):
    import json

    def save_all(save, workdir, values):
        """Your save, called once per value"""
        for value in values:
            save(str(workdir / "values.json"), value)

    values = ["a", "b", "c"]
    for outcome in student.crash_search(save_all, values=values):
        outcome.ok()
        saved = json.loads(outcome.files.get("values.json") or b"[]")
        assert saved == values, f"{outcome.crash_point}: the store holds {saved}, not {values}"
'''


def _graded(submission: str, tmp_path: Path) -> tuple[bool, str]:
    tmp_path.chmod(0o755)  # the sandbox users traverse it
    test_file = tmp_path / "save.py"
    test_file.write_text(SAVE_TEST)
    options = GradingOptions(workdir=tmp_path, crash_points=SearchOptions(seed=1))
    results = grade([test_file], SUBMISSIONS / submission, options)
    (result,) = results.get_result("save").test_case_results
    return result.passed, result.message or ""


def test_a_save_through_temporary_files_of_random_names_is_crashed_at_every_step(
    tmp_path: Path,
) -> None:
    """tempfile's names differ in every run: a crash point is named by the step's kind and
    occurrence ("your 2nd rename of a file"), so every rerun reaches it."""
    passed, message = _graded("save_with_tempfile.py", tmp_path)
    assert passed, message
    found = re.search(r"crash points reached: (\d+) of (\d+) \(all of them tried\)", message)
    assert found and int(found[1]) == int(found[2]) >= 2 * 3, message  # a create, a rename per save


@pytest.mark.parametrize(
    ("submission", "says"),
    [
        ("save_unseen.py", "your code took no durable step the grader can see"),
        ("save_shifting.py", "never took that step again (killed right before your 1st open()"),
    ],
)
def test_a_search_that_reached_no_crash_point_fails_the_case_and_says_why(
    submission: str, says: str, tmp_path: Path
) -> None:
    passed, message = _graded(submission, tmp_path)
    assert not passed, message
    first = message.splitlines()[0]
    assert first.startswith("❌ no crash could be tried: ") and says in first, message
    assert "crash points reached: 0 of" in message, message
