"""``python -m grader``'s help answers at once: the grading machinery (otter, the runner,
pandas) is imported only by the command that uses it (it cost ~5 s of CPU per --help)."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("otter", "grader.runner", "grader.assignments", "pandas", "nbformat")


def test_help_imports_none_of_the_grading_machinery() -> None:
    probe = (
        "import sys\n"
        "from grader.cli import main\n"
        "try:\n"
        "    main(['batch', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert "--jobs" in run.stdout
    assert run.stdout.splitlines()[-1] == "[]", run.stdout.splitlines()[-1]
