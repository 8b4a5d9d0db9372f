"""How long the autograder takes, crash searches included: one submission of each lab that
kills the student's code at its durable steps, and a batch of twenty.

Grading is dominated by what it must do for real: a fresh 3-broker cluster per question,
the submission's sandbox (loaded once, a fork per call), the faults each case scripts, and
for the delivery-semantics questions a crash search (an uncrashed run, then two runs per
crash point tried). The figures answer a course's questions: how long after the deadline
are grades ready, and how much of each run's crash points did the grading try? Target:
at most 90 s per submission on 2 cores, with the crash search (issue 24).

    .venv/bin/python -m bench.grader [--labs 04 05 06 08] [--batch 20] [--jobs 2]
        [--all-crash-points]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

from bench.common import record
from grader import assignments, batch
from grader.runner import GradingOptions, default_search, grade

LABS = ["04", "05", "06", "08"]  # the labs issue 24 measures
BATCH_LAB = "05"  # the lab with the most crash searches
REACHED = re.compile(r"crash points reached: (\d+) of (\d+)")


def grade_lab(lab: str, options: GradingOptions) -> dict[str, object]:
    """One submission (the lab's master: every case runs, none stops early) graded."""
    assignment = assignments.split(assignments.find_master(lab))
    started = time.monotonic()
    results = grade(assignment.test_files, assignment.master, options)
    seconds = time.monotonic() - started
    tried = possible = searches = 0
    per_case = {}
    for name in results.test_files:
        for result in results.get_result(name).test_case_results:
            for found in REACHED.finditer(result.message or ""):
                searches += 1
                tried += int(found.group(1))
                possible += int(found.group(2))
                per_case[f"{name} · {result.test_case.name}"] = f"{found[1]} of {found[2]}"
    return {
        "lab": assignment.name,
        "seconds": round(seconds, 1),
        "score": f"{results.total:g} / {results.possible:g}",
        "crash_searches": searches,
        "crash_points_tried": tried,
        "crash_points": possible,
        "share_tried": round(tried / possible, 2) if possible else None,
        "reached_per_case": per_case,
        "load_average_1m": round(os.getloadavg()[0], 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--labs", nargs="*", default=LABS)
    parser.add_argument("--batch", type=int, default=20, help="submissions in the batch")
    parser.add_argument("--jobs", type=int, default=batch.default_jobs())
    parser.add_argument("--all-crash-points", action="store_true")
    args = parser.parse_args(argv)
    search = default_search(all_points=args.all_crash_points, seed=1)
    options = GradingOptions(crash_points=search)
    labs = []
    for lab in args.labs:
        labs.append(grade_lab(lab, options))
        print(labs[-1], flush=True)
    assignment = assignments.split(assignments.find_master(BATCH_LAB))
    with tempfile.TemporaryDirectory(prefix="kafkalite-bench-grader-") as tmp:
        for i in range(args.batch):
            shutil.copy(assignment.master, Path(tmp) / f"student-{i:02d}.ipynb")
        entries = batch.submissions_in(Path(tmp))
        started = time.monotonic()
        rows = batch.grade_all(assignment, entries, options, args.jobs)
        batch_s = time.monotonic() - started
    full = sum(row.score == row.possible for row in rows)
    record(
        "grader",
        {
            "labs": labs,
            "crash_points": "all" if args.all_crash_points else "a seeded sample (seed 1)",
            "batch_lab": assignment.name,
            "batch": args.batch,
            "jobs": args.jobs,
            "batch_s": round(batch_s, 1),
            "per_submission_in_batch_s": round(batch_s / args.batch, 1),
            "batch_full_marks": full,
            "batch_errors": [r.error for r in rows if r.error],
            "load_average_1m": round(os.getloadavg()[0], 1),
        },
    )


if __name__ == "__main__":
    main()
