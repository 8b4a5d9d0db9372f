"""Grades that mean something: each lab's master graded as a submission, and known-wrong
submissions that must lose exactly the points of the anomaly they have.

A master notebook is a valid submission (its solution regions are the reference answers),
so grading it must give full marks: that proves every test case of the lab, public and
hidden, builds what it needs on the grading cluster and judges the reference right. Each
file ``submissions/labNN_<anomaly>.py`` is what a student might write for one exercise;
it is graded on that exercise's question(s) only (the rest of the lab is the master's
job above), must lose exactly the points of the cases its anomaly breaks, and the
feedback must name the anomaly in the student's terms. One grading per submission is
shared by every assert on it (module-scoped fixtures): a grading costs fresh clusters.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from otter.test_files import GradingResults

from grader import assignments
from grader.runner import GradingOptions, grade

pytestmark = [pytest.mark.grader, pytest.mark.slow]

SUBMISSIONS = Path(__file__).parent / "submissions"


@dataclass(frozen=True, slots=True)
class Graded:
    """One grading: (question, case) -> (passed, message), the totals, and how long it took."""

    cases: dict[tuple[str, str], tuple[bool, str]]
    total: float
    possible: float
    seconds: float

    def failed(self) -> dict[tuple[str, str], str]:
        return {key: message for key, (passed, message) in self.cases.items() if not passed}


def _graded(lab: str, submission: Path, tmp: Path, questions: set[str] | None = None) -> Graded:
    assignment = assignments.split(assignments.find_master(lab))
    files = [f for f in assignment.test_files if questions is None or f.stem in questions]
    assert files, f"no test files for {lab} {questions}"
    started = time.monotonic()
    results: GradingResults = grade(files, submission, GradingOptions(workdir=tmp))
    seconds = time.monotonic() - started
    print(f"graded {submission.name} on {lab}: {seconds:.0f} s")  # shown with -s
    cases = {
        (q, r.test_case.name): (r.passed, r.message or "")
        for q in results.test_files
        for r in results.get_result(q).test_case_results
    }
    return Graded(cases, results.total, results.possible, seconds)


def _master(lab: str) -> Path:
    return assignments.find_master(lab)


# ---- lab 04: leader failover ---------------------------------------------------------


@pytest.fixture(scope="module")
def lab04_master(tmp_path_factory: pytest.TempPathFactory) -> Graded:
    return _graded("04", _master("04"), tmp_path_factory.mktemp("lab04"))


@pytest.fixture(scope="module")
def lab04_acks1(tmp_path_factory: pytest.TempPathFactory) -> Graded:
    return _graded(
        "04",
        SUBMISSIONS / "lab04_acks1.py",
        tmp_path_factory.mktemp("lab04-acks1"),
        {"durable_settings"},
    )


def test_lab04_reference_gets_full_marks(lab04_master: Graded) -> None:
    assert lab04_master.failed() == {}
    assert lab04_master.total == lab04_master.possible == 7


def test_lab04_acks1_loses_the_writes_an_isolated_leader_acknowledged(lab04_acks1: Graded) -> None:
    failed = lab04_acks1.failed()
    assert list(failed) == [
        ("durable_settings", "test_nothing_acknowledged_is_lost_when_the_leader_is_isolated")
    ], failed
    message = next(iter(failed.values()))
    assert "acknowledged writes when the leader was isolated" in message, message
    assert (lab04_acks1.total, lab04_acks1.possible) == (1, 3)
