"""Run the labs again and again on one cluster, and count the runs whose lesson did not hold.

Issue 25 item 5: each lab must run many times in a row on the one cluster a student has
(``make up``), in order 01 -> last, with no error, and its printed lesson must hold in every
run. A lab's master notebook holds the reference predictions before each fault step, and
each step prints ``lab.beside(...)``: a row whose reference prediction differs from what
the cluster did is a lesson that did not hold (``tests.support.notebooks.lessons_not_held``).
This starts one three-broker cluster (as ``make up`` does: no extra settings) unless
``--cluster DIR`` names a running one, runs the given labs (default: all, in order)
``--runs`` times, prints one line per lab and run, and a count per lab at the end; it exits
non-zero unless every run of every lab held.

    .venv/bin/python scripts/lab_lessons.py --runs 20
    .venv/bin/python scripts/lab_lessons.py --runs 5 08 10
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402

from kafkalite.cluster import Cluster  # noqa: E402  (the repository's root, first)
from tests.support.notebooks import labs_in_order  # noqa: E402
from tests.support.ports import free_base_port  # noqa: E402

MASTERS = ROOT / "grader" / "masters"
BUDGET_S = 600


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/lab_lessons.py", description=__doc__)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--cluster", type=Path, help="a running cluster's directory")
    parser.add_argument(
        "--keep",
        type=Path,
        help="save each failed run's notebook and kafka-python DEBUG log (the kernel's) in KEEP",
    )
    parser.add_argument("labs", nargs="*", help="lab numbers (default: every lab)")
    args = parser.parse_args(argv)
    masters = [
        m for m in sorted(MASTERS.glob("*.ipynb")) if not args.labs or m.name[:2] in args.labs
    ]
    with tempfile.TemporaryDirectory(prefix="lab-lessons-") as scratch:
        if args.cluster is None:
            cluster = Cluster.up(Path(scratch) / "cluster", brokers=3, base_port=free_base_port(3))
        else:
            cluster = Cluster.attach(args.cluster)
        try:
            failed = run(masters, args.runs, str(cluster.spec.root), args.keep)
        finally:
            if args.cluster is None:
                cluster.down()
    return 1 if failed else 0


def run(masters: list[Path], runs: int, cluster_root: str, keep: Path | None) -> int:
    """Each run goes through every lab in order; the number of failed lab runs. A failed
    run's executed notebook (its tracebacks) goes to ``keep`` if given."""
    bad: Counter[str] = Counter()
    for lab in labs_in_order(masters, runs, cluster_root, lambda stem: BUDGET_S, keep):
        bad[lab.master.stem] += bool(lab.problems)
        if lab.problems and keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            nbformat.write(lab.notebook, keep / f"run-{lab.run}-{lab.master.name}")  # type: ignore[no-untyped-call]
        verdict = "held" if not lab.problems else "FAILED: " + "; ".join(lab.problems)
        if lab.client_log is not None:
            verdict += f" (client log: {lab.client_log})"
        print(f"run {lab.run} {lab.master.stem}: {lab.elapsed_s:.0f} s, {verdict}", flush=True)
    for master in masters:
        print(f"{master.stem}: {runs - bad[master.stem]} of {runs} runs held")
    return sum(bad.values())


if __name__ == "__main__":
    sys.exit(main())
