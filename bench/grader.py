"""How long the autograder takes: one lab 04 submission, and a batch of twenty.

Grading is dominated by what it must do for real: a fresh 3-broker cluster per question,
a sandboxed Python per test case (importing the lab's API), and the faults each case
scripts. The figures answer a course's question: how long after the deadline are grades
ready? Target: one lab 04 submission in at most 60 s on a quiet 2-core machine.

    .venv/bin/python -m bench.grader [--batch 20] [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from bench.common import record
from grader import assignments, batch
from grader.runner import GradingOptions, grade

LAB = "04"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batch", type=int, default=20, help="submissions in the batch")
    parser.add_argument("--jobs", type=int, default=batch.default_jobs())
    args = parser.parse_args(argv)

    master = assignments.find_master(LAB)
    assignment = assignments.split(master)
    options = GradingOptions()

    started = time.monotonic()
    results = grade(assignment.test_files, master, options)
    one_s = time.monotonic() - started
    assert results.total == results.possible, f"the reference lost points: {results.total}"

    with tempfile.TemporaryDirectory(prefix="kafkalite-bench-grader-") as tmp:
        for i in range(args.batch):
            shutil.copy(master, Path(tmp) / f"student-{i:02d}.ipynb")
        entries = batch.submissions_in(Path(tmp))
        started = time.monotonic()
        rows = batch.grade_all(assignment, entries, options, args.jobs)
        batch_s = time.monotonic() - started
    assert all(row.score == row.possible for row in rows), [r.error for r in rows if r.error]

    record(
        "grader",
        {
            "lab": assignment.name,
            "questions": len(assignment.test_files),
            "one_submission_s": round(one_s, 1),
            "batch": args.batch,
            "jobs": args.jobs,
            "batch_s": round(batch_s, 1),
            "per_submission_in_batch_s": round(batch_s / args.batch, 1),
            "load_average_1m": round(os.getloadavg()[0], 1),
        },
    )


if __name__ == "__main__":
    main()
