"""What staff and students read: a rich table of scores and a plain-text summary."""

from __future__ import annotations

from collections.abc import Callable

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


def summary_text(results: GradingResults) -> str:
    """Gradescope's top-level output: the score and each failed case's first reason."""
    lines = [f"Score: {_points(results.total)} / {_points(results.possible)}"]
    for name in results.test_files:
        for result in results.get_result(name).test_case_results:
            if not result.passed:
                reason = (result.message or "").strip().splitlines()
                lines.append(f"- {name} {result.test_case.name}: {reason[-1] if reason else ''}")
    return "\n".join(lines)


def _points(value: float) -> str:
    return f"{value:g}"
