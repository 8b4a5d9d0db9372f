"""No submission can write its own verdict: each known route to forge one, applied to a
wrong answer, scores exactly what the unpatched wrong answer scores.

The routes (each a submission in ``submissions/forge_*.py``): patching the history checker
and the lab's verdict object, patching otter-grader's test classes, writing fake verdicts
to every inherited descriptor (sockets included), replacing builtins, swapping modules in
``sys.modules``, leaving with ``os._exit(0)`` after writing a fake success where the result
goes, and printing Gradescope-shaped results. Each runs at load (a class body) or when
called, in the sandbox; the judge runs in the grader's process and reads back only the
returned value as data. The toy lab's pure question keeps this fast (no cluster); the
checker route is also tried on a real lab question in ``test_labs_graded.py``
(``lab04_acks1_forged.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader import assignments
from grader.runner import GradingOptions, grade
from tests.grader import toy_lab

pytestmark = [pytest.mark.grader, pytest.mark.slow]

SUBMISSIONS = Path(__file__).parent / "submissions"
ROUTES = sorted(p.name for p in SUBMISSIONS.glob("forge_*.py"))


@pytest.fixture(scope="module")
def q1(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("forgery")
    toy = assignments.split(toy_lab.build(root / "00-toy.ipynb"), cache=root / "cache")
    return [toy.test_files[0]]  # double(x): a public case and a hidden one


def _scores(q1: list[Path], name: str, workdir: Path) -> tuple[dict[str, bool], float]:
    workdir.chmod(0o755)
    results = grade(q1, SUBMISSIONS / name, GradingOptions(workdir=workdir))
    cases = {r.test_case.name: r.passed for r in results.get_result("q1").test_case_results}
    return cases, results.total


@pytest.fixture(scope="module")
def unpatched(q1: list[Path], tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, float]:
    return _scores(q1, "wrong.py", tmp_path_factory.mktemp("wrong"))


def test_the_unpatched_wrong_answer_loses_the_hidden_case(unpatched: tuple[dict, float]) -> None:
    assert unpatched == ({"test_two": True, "test_negative": False}, 1)


@pytest.mark.parametrize("route", ROUTES)
def test_a_forging_route_scores_what_the_wrong_answer_scores(
    q1: list[Path], unpatched: tuple[dict, float], route: str, tmp_path: Path
) -> None:
    assert len(ROUTES) == 7
    assert _scores(q1, route, tmp_path) == unpatched
