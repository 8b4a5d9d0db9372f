"""The grader end to end on a toy lab: real clusters, real sandboxes, real faults.

The reference gets full marks; a wrong submission loses exactly the points of the cases
it gets wrong; each kind of broken submission loses only the cases it breaks, says why,
and leaves nothing running."""

from __future__ import annotations

import csv
import fcntl
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import psutil
import pytest

from grader import assignments, bundle, runner, sandbox
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


def _assert_nothing_left(workdir):
    """No process of a sandbox uid that no grader holds now (graders running beside this
    test hold theirs), and no broker of a cluster started under ``workdir``."""
    if sandbox.confined_by_uid():
        for index in range(sandbox.UID_POOL_SIZE):
            fd = os.open(sandbox.SLOT_DIR / f"{index}.lock", os.O_CREAT | os.O_RDWR, 0o600)
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # in use by another grading
                assert sandbox._processes_of(sandbox.UID_POOL_BASE + index) == set()
            finally:
                os.close(fd)
    brokers = [
        p
        for p in psutil.process_iter(["cmdline"])
        if str(workdir) in " ".join(p.info["cmdline"] or [])
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
    _assert_nothing_left(tmp_path)


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


def test_an_endless_exercise_costs_its_own_cases_and_the_others_still_run(toy, tmp_path):
    limits = sandbox.Limits(time_s=15)
    cases, results = _grade(toy, "endless.py", tmp_path, limits=limits)
    for case in ("test_two", "test_negative"):
        passed, message = cases[("q1", case)]
        assert not passed and "did not finish within 15 s" in message, message
    assert cases[("q2", "test_nothing_acknowledged_is_lost_when_the_leader_dies")][0]
    assert results.total == 3
    _assert_nothing_left(tmp_path)


@pytest.mark.parametrize(
    ("submission", "reason"),
    [
        ("fork_bomb.py", "did not finish within 15 s"),
        ("flood.py", "more output than the limit"),
        ("escape.py", "wrote outside its directory (/tmp/kafkalite-toy-escape.txt)"),
        ("syntax_error.ipynb", "cell 2 has a syntax error"),
    ],
)
def test_a_broken_exercise_fails_with_the_reason(toy, tmp_path, submission, reason):
    if "outside" in reason and not sandbox.confined_by_uid():
        pytest.skip("writes outside the directory are caught with uid confinement (root) only")
    limits = sandbox.Limits(time_s=15, max_output_bytes=10 << 20)
    q1 = [toy.test_files[0]]  # q2 costs a cluster and a failover: the endless case covers it
    results = grade(q1, SUBMISSIONS / submission, GradingOptions(workdir=tmp_path, limits=limits))
    for result in results.get_result("q1").test_case_results:
        assert not result.passed and reason in result.message, result.message
    _assert_nothing_left(tmp_path)


def test_a_pure_question_is_graded_without_a_cluster_and_says_so(toy, tmp_path, monkeypatch):
    started = []
    real = runner._fresh_cluster
    monkeypatch.setattr(runner, "_fresh_cluster", lambda *a: started.append(a) or real(*a))
    q1 = [toy.test_files[0]]  # test_two(double), test_negative(double): no lab, no cluster
    results = grade(q1, SUBMISSIONS / "pure_uses_lab.py", GradingOptions(workdir=tmp_path))
    assert started == []
    for result in results.get_result("q1").test_case_results:
        assert not result.passed
        assert "graded without a cluster" in result.message, result.message
        assert "`lab.events` is not available" in result.message, result.message


def test_an_exception_at_import_fails_every_case_with_the_reason(toy, tmp_path):
    cases, results = _grade(toy, "import_error.py", tmp_path)
    assert results.total == 0
    for passed, message in cases.values():
        assert not passed
        assert "ModuleNotFoundError when it was loaded: No module named 'no_such_module'" in message


@pytest.mark.skipif(not sandbox.confined_by_uid(), reason="needs uid confinement (root)")
def test_a_submission_cannot_kill_the_brokers(toy, tmp_path):
    cases, _ = _grade(toy, "broker_killer.py", tmp_path)
    assert cases[("q1", "test_two")][0]
    passed, message = cases[("q2", "test_nothing_acknowledged_is_lost_when_the_leader_dies")]
    assert not passed and "PermissionError" in message
    _assert_nothing_left(tmp_path)


def _command(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "grader", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_command_writes_gradescope_results_that_keep_hidden_cases_hidden(toy, tmp_path):
    results_path = tmp_path / "results.json"
    run = _command(str(toy.master), str(SUBMISSIONS / "wrong.py"), "--results", str(results_path))
    assert run.returncode == 0, run.stderr
    results = json.loads(results_path.read_text())
    assert results["execution_time"] > 0
    assert "score" not in results  # Gradescope adds up the tests it shows
    named = {t["name"]: t for t in results["tests"]}
    assert named["q1 · test_two"] == {
        "name": "q1 · test_two", "score": 1.0, "max_score": 1.0, "output": "✅ passed",
        "visibility": "visible", "status": "passed",
    }  # fmt: skip
    negative = named["q1 · test_negative"]
    assert negative["visibility"] == "hidden" and negative["score"] == 0
    assert "double(-3) should be -6" in negative["output"]  # for the staff, after grading
    shown = results["output"]
    assert shown.startswith("graded wrong.py\nPublic tests: 1 / 1")
    assert "negative" not in shown and "-6" not in shown and "q2" not in shown
    assert "Hidden tests count too; their results are shown by your instructor." in shown
    visible = sum(t["score"] for t in results["tests"] if t["visibility"] == "visible")
    assert visible == 1
    run = _command(
        str(toy.master), str(SUBMISSIONS / "wrong.py"), "--results", str(results_path),
        "--show-hidden",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    results = json.loads(results_path.read_text())
    hidden = {t["visibility"] for t in results["tests"] if "negative" in t["name"]}
    assert hidden == {"after_published"}
    assert "negative" not in results["output"]


def test_a_submission_that_cannot_be_graded_still_gets_results(toy, tmp_path):
    results_path = tmp_path / "results.json"
    run = _command(str(toy.master), str(tmp_path / "nothing-here"), "--results", str(results_path))
    assert run.returncode == 2
    results = json.loads(results_path.read_text())
    assert results["score"] == 0 and results["tests"] == []
    assert results["output"].startswith("This submission could not be graded: SubmissionError: no ")


def test_a_folder_of_submissions_is_graded_into_a_csv(toy, tmp_path):
    folder = tmp_path / "submissions"
    folder.mkdir()
    shutil.copy(SUBMISSIONS / "reference.py", folder / "alice.py")
    (folder / "bob").mkdir()
    shutil.copy(SUBMISSIONS / "syntax_error.ipynb", folder / "bob" / "lab.ipynb")
    (folder / "carol").mkdir()  # submitted nothing
    grades = tmp_path / "grades.csv"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "batch",
            str(toy.master),
            str(folder),
            "--csv",
            str(grades),
            "--jobs",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    rows = {row["submission"]: row for row in csv.DictReader(grades.open())}
    assert (rows["alice.py"]["score"], rows["alice.py"]["possible"]) == ("6", "6")
    assert (rows["bob"]["q1"], rows["bob"]["q2"]) == ("0", "3")
    assert rows["carol"]["error"].startswith("no notebook (.ipynb) or script (.py) in")
    _assert_nothing_left(tmp_path)


@pytest.mark.timeout(1800)  # setup.sh installs a virtual environment: minutes on a busy machine
def test_the_gradescope_zip_grades_in_a_clean_directory(toy, tmp_path):
    archive = bundle.build(toy.master, tmp_path / "autograder.zip")
    root = tmp_path / "autograder"
    with zipfile.ZipFile(archive) as z:
        z.extractall(root / "source")
    names = set(z.namelist())
    assert {"setup.sh", "run_autograder", "grader/masters/00-toy.ipynb"} <= names
    assert not any(n.startswith("grader/masters/0") and "toy" not in n for n in names)
    env = {**os.environ, "AUTOGRADER_ROOT": str(root)}
    for script in ("setup.sh", "run_autograder"):
        (root / "source" / script).chmod(0o755)
    setup = _script(root / "source" / "setup.sh", env, timeout=1500)
    assert setup.returncode == 0, setup.stderr[-2000:]
    (root / "submission").mkdir()
    shutil.copy(SUBMISSIONS / "wrong.py", root / "submission" / "lab.py")
    run = _script(root / "source" / "run_autograder", env, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    results = json.loads((root / "results" / "results.json").read_text())
    assert "score" not in results  # Gradescope adds up the tests it shows
    visible = [t["score"] for t in results["tests"] if t["visibility"] == "visible"]
    assert sum(visible) == 1, results
    _assert_nothing_left(tmp_path)


def _script(path: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(path)], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
