"""``python -m grader``: grade a submission, and keep the labs' student versions current.

    python -m grader LAB SUBMISSION [--results results.json]   grade one submission
    python -m grader assign [LAB ...] [--check]                 masters -> labs/ (student versions)

Grading exits 0 whenever grading worked, however many tests failed; non-zero only when
grading itself broke (a missing lab, a cluster that would not start).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from otter.run.run_autograder.autograder_config import AutograderConfig
from rich.console import Console

from grader import assignments, report
from grader.assignments import AssignmentError
from grader.runner import GradingOptions, grade
from grader.sandbox import DEFAULT_TIME_S, Limits
from kafkalite.cluster import ClusterError

COMMANDS = ("assign",)


def _grade_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m grader",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("lab", help="the lab: 04, 04-leader-failover or a master notebook")
    parser.add_argument("submission", type=Path, help="the student's .ipynb or .py")
    parser.add_argument("--results", type=Path, help="write Gradescope's results.json here")
    parser.add_argument(
        "--time-limit",
        type=float,
        default=DEFAULT_TIME_S,
        metavar="S",
        help="seconds per test case (default %(default)s)",
    )
    parser.add_argument(
        "--show-hidden",
        action="store_true",
        help="let students see hidden tests' results once published",
    )
    return parser


def _assign_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m grader assign")
    parser.add_argument("labs", nargs="*", help="labs to split (default: every master)")
    parser.add_argument(
        "--check",
        action="store_true",
        help="only check that labs/ holds the current student versions",
    )
    return parser


def grade_command(argv: Sequence[str]) -> int:
    args = _grade_parser().parse_args(argv)
    console = Console(stderr=True)
    if not args.submission.is_file():
        console.print(f"error: no submission at {args.submission}")
        return 2
    started = time.monotonic()
    assignment = assignments.split(assignments.find_master(args.lab))
    options = GradingOptions(limits=Limits(time_s=args.time_limit))
    results = grade(
        assignment.test_files, args.submission, options, progress=report.progress_printer(console)
    )
    results.output = report.summary_text(results)
    gradescope = results.to_gradescope_dict(AutograderConfig({"show_hidden": args.show_hidden}))
    gradescope["execution_time"] = round(time.monotonic() - started, 1)
    gradescope.setdefault("score", results.total)
    console.print(report.table(results, assignment.name))
    if args.results is not None:
        args.results.parent.mkdir(parents=True, exist_ok=True)
        args.results.write_text(json.dumps(gradescope, indent=2, ensure_ascii=False))
    return 0


def assign_command(argv: Sequence[str]) -> int:
    args = _assign_parser().parse_args(argv)
    masters = [assignments.find_master(lab) for lab in args.labs] or sorted(
        assignments.MASTERS.glob("*.ipynb")
    )
    stale = []
    for master in masters:
        text = assignments.student_version(assignments.split(master))
        target = assignments.LABS / master.name
        if target.exists() and target.read_text() == text:
            continue
        if args.check:
            stale.append(target.name)
        else:
            target.parent.mkdir(exist_ok=True)
            target.write_text(text)
            print(f"wrote {target.relative_to(assignments.REPO_ROOT)}")
    if stale:
        print(
            f"labs/ is out of date with grader/masters/: {', '.join(stale)}; "
            "run `python -m grader assign`",
            file=sys.stderr,
        )
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] == "assign":
            return assign_command(argv[1:])
        return grade_command(argv)
    except (AssignmentError, ClusterError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
