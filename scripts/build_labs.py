"""Build the student notebooks in labs/ from the otter-grader masters in grader/masters/.

For each master, ``otter assign`` makes the student version (solutions replaced by
``...``, hidden tests removed, public tests kept for ``grader.check``); this script clears
its outputs and writes it to ``labs/<name>.ipynb``. Tests are not run here: they need a
cluster, and ``tests/labs`` runs every master top to bottom against a fresh one.

    python scripts/build_labs.py                 # every master
    python scripts/build_labs.py --out /tmp/x    # somewhere else (tests compare with labs/)
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
from pathlib import Path

import nbformat
from otter.assign import main as otter_assign

ROOT = Path(__file__).resolve().parent.parent
MASTERS = ROOT / "grader" / "masters"


def student_version(master: Path, out_dir: Path) -> Path:
    with tempfile.TemporaryDirectory() as work, contextlib.redirect_stdout(io.StringIO()):
        otter_assign(str(master), work, no_pdfs=True, no_run_tests=True)
        notebook = nbformat.read(Path(work) / "student" / master.name, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    target = out_dir / master.name
    nbformat.write(notebook, target)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "labs")
    parser.add_argument("masters", nargs="*", type=Path)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for master in args.masters or sorted(MASTERS.glob("*.ipynb")):
        print(student_version(master, args.out).relative_to(args.out.parent))
    return 0


if __name__ == "__main__":
    sys.exit(main())
