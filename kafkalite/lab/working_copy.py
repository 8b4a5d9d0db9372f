"""The student's own copies of the labs: ``my-labs/``, filled from ``labs/``.

``labs/`` holds the notebooks as shipped (generated from ``grader/masters/`` and tracked by
git). A student who ran and answered them there saw every notebook as a change to a
tracked file, and a ``git pull`` refuse to bring new versions. ``make up`` therefore
serves a working folder git ignores: each lab missing there is copied in, and a copy the
student already has is never overwritten. ``make labs-reset`` puts the shipped version
back, keeping the student's copy aside in ``.before-reset/<time>/`` of that folder.

    python -m kafkalite.lab.working_copy SHIPPED WORK            # copy in the missing labs
    python -m kafkalite.lab.working_copy SHIPPED WORK --reset [LAB ...]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

KEPT_ASIDE = ".before-reset"


def shipped_labs(shipped: Path) -> list[Path]:
    return sorted(shipped.glob("*.ipynb"))


def fill(shipped: Path, work: Path) -> list[str]:
    """Copy each shipped lab that ``work`` lacks; return the names copied."""
    work.mkdir(parents=True, exist_ok=True)
    copied = []
    for lab in shipped_labs(shipped):
        if not (work / lab.name).exists():
            shutil.copy2(lab, work / lab.name)
            copied.append(lab.name)
    return copied


def reset(shipped: Path, work: Path, only: list[str] | None = None) -> tuple[list[str], Path]:
    """Put the shipped version of each lab (or of those whose name starts with one of
    ``only``: ``04``) back in ``work``; the copies replaced go to a dated folder of
    ``.before-reset/``. Returns the names reset and that folder."""
    aside = work / KEPT_ASIDE / time.strftime("%Y-%m-%d-%H%M%S")
    chosen = [
        lab
        for lab in shipped_labs(shipped)
        if not only or any(lab.name.startswith(prefix) for prefix in only)
    ]
    work.mkdir(parents=True, exist_ok=True)
    for lab in chosen:
        mine = work / lab.name
        if mine.exists():
            aside.mkdir(parents=True, exist_ok=True)
            shutil.move(mine, aside / lab.name)
        shutil.copy2(lab, mine)
    return [lab.name for lab in chosen], aside


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m kafkalite.lab.working_copy",
        description="The labs as shipped, copied into a working folder git ignores.",
    )
    parser.add_argument("shipped", type=Path, help="the labs as shipped (labs/)")
    parser.add_argument("work", type=Path, help="the student's folder (my-labs/)")
    parser.add_argument("--reset", nargs="*", metavar="LAB", help="put back the shipped version")
    args = parser.parse_args(argv)
    if not shipped_labs(args.shipped):
        print(f"error: no notebooks in {args.shipped}", file=sys.stderr)
        return 1
    if args.reset is None:
        copied = fill(args.shipped, args.work)
        if copied:
            print(f"copied {len(copied)} labs into {args.work}/ (your copies: git ignores them)")
        return 0
    names, aside = reset(args.shipped, args.work, args.reset)
    if not names:
        print(
            f"error: no lab in {args.shipped} starts with {' or '.join(args.reset)}",
            file=sys.stderr,
        )
        return 1
    print(f"{len(names)} labs in {args.work}/ are as shipped again: {', '.join(names)}")
    if aside.exists():
        print(f"your previous copies are in {aside}/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
