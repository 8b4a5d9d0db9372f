"""``python -m grader``: grade submissions, package a lab for Gradescope, keep labs/ current.

    python -m grader LAB SUBMISSION [--results results.json]   grade one submission
    python -m grader batch LAB DIR --csv grades.csv [--jobs N]  grade a folder of them
    python -m grader bundle LAB [-o LAB-autograder.zip]         Gradescope's autograder zip
    python -m grader assign [LAB ...] [--check]                 masters -> labs/ (student versions)

LAB is a lab's number (04), its name (04-leader-failover) or a master notebook's path.
Grading exits 0 whenever grading worked, however many tests failed; it exits 2 only when
grading itself broke (no such lab, no submission, a cluster that would not start), and
even then writes ``--results`` (score 0, and why), as Gradescope needs a results.json.
"""

# Each command imports what it needs (otter, the runner, rich) itself: they cost seconds
# of CPU, and `--help` or a mistyped argument must answer at once.
# ruff: noqa: PLC0415

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grader.sandbox import DEFAULT_TIME_S
from grader.submissions import SubmissionError
from kafkalite.cluster import ClusterError

if TYPE_CHECKING:
    from grader.runner import GradingOptions


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--time-limit",
        type=float,
        default=DEFAULT_TIME_S,
        metavar="S",
        help="seconds per run of the student's code (default %(default)s; with Spark: 300)",
    )
    parser.add_argument(
        "--all-crash-points",
        action="store_true",
        help="try every crash point of a crash search (default: a seeded sample)",
    )
    parser.add_argument(
        "--seed", type=int, help="the crash-point sample's seed (default: random, reported)"
    )


def _grading_options(args: argparse.Namespace) -> GradingOptions:
    from grader.runner import GradingOptions, default_search
    from grader.sandbox import Limits

    return GradingOptions(
        limits=Limits(time_s=args.time_limit),
        crash_points=default_search(all_points=args.all_crash_points, seed=args.seed),
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m grader",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("grade", help="grade one submission (the default command)")
    one.add_argument("lab")
    one.add_argument("submission", type=Path, help="a .ipynb, a .py, or a folder holding one")
    one.add_argument("--results", type=Path, help="write Gradescope's results.json here")
    one.add_argument(
        "--show-hidden",
        action="store_true",
        help="students see hidden tests' results once grades are published",
    )
    _options(one)
    many = sub.add_parser("batch", help="grade every submission in a folder")
    many.add_argument("lab")
    many.add_argument("folder", type=Path)
    many.add_argument("--csv", type=Path, required=True, help="one row per submission")
    many.add_argument("--jobs", type=int, help="at once (default: one per core)")
    many.add_argument("--results-dir", type=Path, help="each submission's results as JSON")
    _options(many)
    zip_ = sub.add_parser("bundle", help="Gradescope's autograder zip for a lab")
    zip_.add_argument("lab")
    zip_.add_argument("-o", "--output", type=Path, help="default: LAB-autograder.zip")
    split = sub.add_parser("assign", help="write labs/ from the masters in grader/masters/")
    split.add_argument("labs", nargs="*", help="labs to split (default: every master)")
    split.add_argument(
        "--check", action="store_true", help="only check that labs/ is current (for CI)"
    )
    return parser


def grade_command(args: argparse.Namespace) -> int:
    from rich.console import Console

    from grader import assignments, report, submissions
    from grader.runner import grade

    console = Console(stderr=True)
    started = time.monotonic()
    try:
        assignment = assignments.split(assignments.find_master(args.lab))
        chosen = submissions.resolve(args.submission, assignment.name, assignment.exercises)
        console.print(chosen.note)
        results = grade(
            assignment.test_files,
            chosen.path,
            _grading_options(args),
            progress=report.progress_printer(console),
        )
    except Exception as exc:  # grading broke: the student still gets a results.json
        _write_results(args.results, report.failed_to_grade(exc), started)
        raise
    console.print(report.table(results, assignment.name))
    _write_results(args.results, report.gradescope(results, args.show_hidden, chosen.note), started)
    return 0


def _write_results(path: Path | None, results: dict[str, Any], started: float) -> None:
    if path is None:
        return
    results["execution_time"] = round(time.monotonic() - started, 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2, ensure_ascii=False))


def batch_command(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import Progress

    from grader import assignments, batch

    assignment = assignments.split(assignments.find_master(args.lab))
    entries = batch.submissions_in(args.folder)
    options = _grading_options(args)
    with Progress(console=Console(stderr=True)) as progress:
        task = progress.add_task(f"grading {assignment.name}", total=len(entries))

        def done(row: batch.Row) -> None:
            outcome = row.error or f"{row.score:g} / {row.possible:g}"
            progress.console.print(f"{row.submission}: {outcome}")
            progress.advance(task)

        jobs = args.jobs or batch.default_jobs()
        rows = batch.grade_all(assignment, entries, options, jobs, args.results_dir, done)
    batch.write_csv(rows, args.csv)
    print(f"graded {len(rows)} submissions of {assignment.name} into {args.csv}")
    return 0


def bundle_command(args: argparse.Namespace) -> int:
    from grader import assignments, bundle

    master = assignments.find_master(args.lab)
    output = args.output or Path(f"{master.stem}-autograder.zip")
    bundle.build(master, output)
    print(f"wrote {output}: upload it as the assignment's autograder on Gradescope")
    return 0


def assign_command(args: argparse.Namespace) -> int:
    from grader import assignments

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


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "grade": grade_command,
    "batch": batch_command,
    "bundle": bundle_command,
    "assign": assign_command,
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] not in COMMANDS and not argv[0].startswith("-"):
        argv.insert(0, "grade")  # python -m grader LAB SUBMISSION
    args = _parser().parse_args(argv)
    from grader.assignments import AssignmentError  # otter: only once a command runs

    try:
        return COMMANDS[args.command](args)
    except (AssignmentError, ClusterError, SubmissionError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2  # with --results, results.json says so too
