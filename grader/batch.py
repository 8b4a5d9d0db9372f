"""A folder of submissions graded at once: ``python -m grader batch LAB DIR --csv grades.csv``.

Each submission (a notebook or script in DIR, or a folder of one student's files) is graded
as ``python -m grader`` grades one: its own clusters, its own sandboxes. Several run side
by side, up to the machine's cores by default (each keeps a core busy with three brokers),
and the CSV has one row per submission: its score, the possible score and each question's.
A submission whose grading broke gets a row saying why; the batch goes on.
"""

from __future__ import annotations

import csv
import json
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from grader.assignments import Assignment
from grader.runner import GradingOptions, grade
from grader.submissions import SubmissionError, resolve
from kafkalite.cluster import ClusterError


@dataclass(slots=True)
class Row:
    submission: str
    score: float = 0.0
    possible: float = 0.0
    questions: dict[str, float] = field(default_factory=dict)
    error: str = ""


def submissions_in(folder: Path) -> list[Path]:
    """Every gradable entry of ``folder``, by name."""
    return sorted(
        p
        for p in folder.iterdir()
        if not p.name.startswith(".") and (p.is_dir() or p.suffix in (".ipynb", ".py"))
    )


def grade_all(
    assignment: Assignment,
    entries: list[Path],
    options: GradingOptions,
    jobs: int,
    results_dir: Path | None = None,
    done: Callable[[Row], None] | None = None,
) -> list[Row]:
    """Grade every entry, ``jobs`` at a time; rows come back in the entries' order."""

    def one(entry: Path) -> Row:
        row = Row(entry.name)
        try:
            chosen = resolve(entry, assignment.name, assignment.exercises)
            results = grade(assignment.test_files, chosen.path, options)
        except (SubmissionError, ClusterError) as exc:
            row.error = str(exc)
            return row
        except Exception as exc:  # the grader broke on this one: say so, grade the others
            row.error = f"grading broke: {type(exc).__name__}: {exc}"
            return row
        row.score, row.possible = results.total, results.possible
        row.questions = {name: results.get_result(name).score for name in results.test_files}
        if results_dir is not None:
            results_dir.mkdir(parents=True, exist_ok=True)
            summary = json.dumps(results.to_dict(), indent=2, default=str)
            (results_dir / f"{entry.stem}.json").write_text(summary)
        return row

    rows: dict[Path, Row] = {}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = {pool.submit(one, entry): entry for entry in entries}
        for future in as_completed(futures):
            rows[futures[future]] = row = future.result()
            if done is not None:
                done(row)
    return [rows[entry] for entry in entries]


def write_csv(rows: list[Row], path: Path) -> None:
    questions = sorted({q for row in rows for q in row.questions})
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["submission", "score", "possible", *questions, "error"])
        for row in rows:
            scores = [f"{row.questions[q]:g}" if q in row.questions else "" for q in questions]
            writer.writerow(
                [row.submission, f"{row.score:g}", f"{row.possible:g}", *scores, row.error]
            )


def default_jobs() -> int:
    return os.cpu_count() or 1
