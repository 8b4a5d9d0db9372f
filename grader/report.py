"""What staff and students read: a rich table of scores, a staff summary, and Gradescope's
``results.json``, in which hidden cases stay hidden."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from otter.test_files import GradingResults
from rich.console import Console
from rich.table import Table

from grader.runner import CaseVerdict


def progress_printer(console: Console) -> Callable[[str, str, CaseVerdict], None]:
    """One line per finished test case, as grading goes."""

    def show(question: str, case: str, verdict: CaseVerdict) -> None:
        mark = "[green]passed[/]" if verdict.passed else "[red]failed[/]"
        console.print(f"{question} · {case}: {mark}")

    return show


def table(results: GradingResults, title: str) -> Table:
    scores = Table(title=f"{title}: {_points(results.total)} / {_points(results.possible)}")
    for column in ("question", "test", "points", "result"):
        scores.add_column(column)
    for name in results.test_files:
        for result in results.get_result(name).test_case_results:
            case = result.test_case
            points = (
                _points(case.points or 0) if result.passed else f"0 / {_points(case.points or 0)}"
            )
            first_line = (result.message or "").strip().splitlines()[:2]
            scores.add_row(name, case.name, points, "\n".join(first_line))
    return scores


def gradescope(results: GradingResults, show_hidden: bool, note: str = "") -> dict[str, Any]:
    """Gradescope's ``results.json``: one test per case. A hidden case is ``hidden`` (never
    shown to the student) or, with ``show_hidden``, ``after_published``; either way nothing
    of it (name, message, points) is in what a student sees before grades are published:
    not in the top-level output, which speaks of public cases only, and not in a total,
    which is left for Gradescope to add up from the tests it shows."""
    hidden = "after_published" if show_hidden else "hidden"
    tests = []
    for name in results.test_files:
        for result in results.get_result(name).test_case_results:
            case = result.test_case
            points = float(case.points or 0)
            tests.append(
                {
                    "name": f"{name} · {case.name}",
                    "score": points if result.passed else 0.0,
                    "max_score": points,
                    "output": (result.message or "").strip(),
                    "visibility": hidden if case.hidden else "visible",
                    "status": "passed" if result.passed else "failed",
                }
            )
    return {"output": student_summary(results, show_hidden, note), "tests": tests}


def failed_to_grade(error: BaseException) -> dict[str, Any]:
    """``results.json`` when grading itself broke: no score, and the one-line reason."""
    reason = f"{type(error).__name__}: {error}" if str(error).strip() else type(error).__name__
    message = (
        f"This submission could not be graded: {reason}. "
        "Nothing was scored; if the reason is not about your files, tell your instructor."
    )
    return {"score": 0.0, "output": message, "tests": []}


def student_summary(results: GradingResults, show_hidden: bool, note: str = "") -> str:
    """The top-level output a student reads: the public cases' score and the first reason
    of each public case that failed; of the hidden ones, only that they exist."""
    public = [
        (name, r)
        for name in results.test_files
        for r in results.get_result(name).test_case_results
        if not r.test_case.hidden
    ]
    got = sum(float(r.test_case.points or 0) for _, r in public if r.passed)
    possible = sum(float(r.test_case.points or 0) for _, r in public)
    lines = [note] if note else []
    lines.append(f"Public tests: {_points(got)} / {_points(possible)}")
    for name, result in public:
        if not result.passed:
            reason = (result.message or "").strip().splitlines()
            lines.append(f"- {name} {result.test_case.name}: {reason[0] if reason else ''}")
    if len(public) < sum(len(results.get_result(n).test_case_results) for n in results.test_files):
        when = "once grades are published" if show_hidden else "by your instructor"
        lines.append(f"Hidden tests count too; their results are shown {when}.")
    return "\n".join(lines)


def _points(value: float) -> str:
    return f"{value:g}"
