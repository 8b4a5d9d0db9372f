"""The grader end to end on a toy lab: real clusters, real sandboxes, real faults.

The reference gets full marks; a wrong submission loses exactly the points of the cases
it gets wrong; each kind of broken submission loses only the cases it breaks, says why,
and leaves nothing running."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from grader import assignments, sandbox
from grader.runner import GradingOptions, grade
from tests.grader import toy_lab

pytestmark = [pytest.mark.grader, pytest.mark.slow]

SUBMISSIONS = Path(__file__).parent / "submissions"


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    root = tmp_path_factory.mktemp("toy")
    master = toy_lab.build(root / "00-toy.ipynb")
    return assignments.split(master, cache=root / "cache")


def _grade(toy, name, tmp_path, **options):
    results = grade(toy.test_files, SUBMISSIONS / name, GradingOptions(workdir=tmp_path, **options))
    return {
        (q, r.test_case.name): (r.passed, r.message)
        for q in results.test_files
        for r in results.get_result(q).test_case_results
    }, results


def _assert_nothing_left():
    if sandbox.confined_by_uid():
        for uid in range(sandbox.UID_POOL_BASE, sandbox.UID_POOL_BASE + sandbox.UID_POOL_SIZE):
            assert sandbox._processes_of(uid) == set()
    brokers = [
        p
        for p in psutil.process_iter(["cmdline"])
        if "kafkalite-grade-" in " ".join(p.info["cmdline"] or [])
    ]
    assert brokers == [], "a grading cluster outlived its grading"


def test_the_split_keeps_hidden_tests_from_students(toy):
    student = toy.student_notebook.read_text()
    assert "test_negative" not in student and "return 2 * x" not in student
    assert [p.name for p in toy.test_files] == ["q1.py", "q2.py"]


def test_the_reference_gets_full_marks(toy, tmp_path):
    cases, results = _grade(toy, "reference.py", tmp_path)
    assert all(passed for passed, _ in cases.values()), cases
    assert (results.total, results.possible) == (6, 6)
    _assert_nothing_left()


def test_a_wrong_submission_loses_exactly_its_wrong_cases(toy, tmp_path):
    cases, results = _grade(toy, "wrong.py", tmp_path)
    assert cases[("q1", "test_two")][0]
    assert not cases[("q1", "test_negative")][0]
    assert "double(-3) should be -6" in cases[("q1", "test_negative")][1]
    assert not cases[("q2", "test_nothing_acknowledged_is_lost_when_the_leader_dies")][0]
    assert (
        "lost 1 acknowledged records"
        in cases[("q2", "test_nothing_acknowledged_is_lost_when_the_leader_dies")][1]
    )
    assert results.total == 1


@pytest.mark.parametrize(
    ("submission", "reason"),
    [
        ("endless.py", "time limit"),
        ("fork_bomb.py", "time limit"),
        ("flood.py", "more output than the limit"),
        ("escape.py", "wrote outside its directory (/tmp/kafkalite-toy-escape.txt)"),
        ("syntax_error.ipynb", "cell 2 has a syntax error"),
    ],
)
def test_a_broken_exercise_costs_its_own_cases_only(toy, tmp_path, submission, reason):
    if "outside" in reason and not sandbox.confined_by_uid():
        pytest.skip("writes outside the directory are caught with uid confinement (root) only")
    limits = sandbox.Limits(time_s=20, max_output_bytes=10 << 20)
    cases, results = _grade(toy, submission, tmp_path, limits=limits)
    for case in ("test_two", "test_negative"):
        passed, message = cases[("q1", case)]
        assert not passed and reason in message, message
    assert cases[("q2", "test_nothing_acknowledged_is_lost_when_the_leader_dies")][0]
    assert results.total == 3
    _assert_nothing_left()


def test_an_exception_at_import_fails_every_case_with_the_reason(toy, tmp_path):
    cases, results = _grade(toy, "import_error.py", tmp_path)
    assert results.total == 0
    for passed, message in cases.values():
        assert not passed
        assert "ModuleNotFoundError when it was loaded: No module named 'no_such_module'" in message


@pytest.mark.skipif(not sandbox.confined_by_uid(), reason="needs uid confinement (root)")
def test_a_submission_cannot_kill_the_brokers(toy, tmp_path):
    cases, _ = _grade(toy, "broker_killer.py", tmp_path)
    passed, message = cases[("q2", "test_nothing_acknowledged_is_lost_when_the_leader_dies")]
    assert not passed and "PermissionError" in message
    _assert_nothing_left()


def test_the_command_writes_gradescope_results(toy, tmp_path):
    results_path = tmp_path / "results.json"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            str(toy.master),
            str(SUBMISSIONS / "wrong.py"),
            "--results",
            str(results_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    results = json.loads(results_path.read_text())
    assert results["score"] == 1
    assert results["execution_time"] > 0
    named = {t["name"]: t for t in results["tests"]}
    assert named["q1"]["score"] == 1 and named["q1"]["max_score"] == 3
    assert {"name", "score", "max_score", "output", "visibility"} <= set(named["q2"])
    assert "Score: 1 / 6" in results["output"]
