"""The Gradescope autograder zip for one lab: ``python -m grader bundle LAB``.

Gradescope unpacks the zip into ``/autograder/source``, runs ``setup.sh`` once when it
builds the image, then ``run_autograder`` for each submission with the student's files in
``/autograder/submission`` and expects ``/autograder/results/results.json``. The zip holds
this project (the package, the grader, the lab's master) and two scripts:

- ``setup.sh`` installs Python with venv (apt, when missing), a virtual environment with
  the project and what grading needs of ``requirements.txt`` (its pins, without the
  lab's JupyterLab and browser, the test and quality tools, and Spark unless the lab
  uses it: a smaller image, built in minutes);
- ``run_autograder`` runs ``python -m grader LAB <submission> --results ...``.

Both honour ``AUTOGRADER_ROOT`` (default ``/autograder``), which is how the tests run the
zip in a clean directory of their own. otter-grader's own ``otter generate`` cannot serve
here: its ``setup.sh`` downloads Miniforge from GitHub and its runner executes the whole
notebook in one kernel, with no cluster, no faults and no sandbox per test.
"""

from __future__ import annotations

import stat
import zipfile
from pathlib import Path

from grader.assignments import REPO_ROOT, uses_spark

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder image.
set -euo pipefail
ROOT="${AUTOGRADER_ROOT:-/autograder}"
cd "$ROOT/source"
NEEDED="3.11"  # pyproject.toml's requires-python
found_python() {
  for candidate in python3 python3.13 python3.12 python3.11; do
    if command -v "$candidate" >/dev/null && "$candidate" -c \\
      'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
      echo "$candidate"; return 0
    fi
  done
  return 1
}
if ! PYTHON=$(found_python); then
  echo "setup.sh: Kafka-Lite's grader needs Python >= $NEEDED with venv; installing python$NEEDED"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "python$NEEDED" "python$NEEDED-venv" "python$NEEDED-dev" gcc util-linux \\
    || apt-get install -y -qq python3 python3-venv python3-dev gcc util-linux
  if ! PYTHON=$(found_python); then
    echo "setup.sh: no Python >= $NEEDED with venv here ($(python3 --version 2>&1 || echo none));"\\
      "use a Gradescope base image with Python $NEEDED or later (Ubuntu 22.04: python$NEEDED)" >&2
    exit 1
  fi
fi
echo "setup.sh: $("$PYTHON" --version) at $(command -v "$PYTHON")"
"$PYTHON" -m venv .venv
.venv/bin/pip install --quiet --upgrade pip
.venv/bin/pip install --quiet -r requirements.txt
.venv/bin/pip install --quiet --no-deps -e .
if [ -f scripts/install-java.sh ]; then bash scripts/install-java.sh .venv; fi  # Spark labs
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for each submission; results.json is what it reads back, so there
# is one even when the grader could not run at all.
set -uo pipefail
ROOT="${{AUTOGRADER_ROOT:-/autograder}}"
RESULTS="$ROOT/results/results.json"
mkdir -p "$ROOT/results"
cd "$ROOT/source"
.venv/bin/python -m grader {lab} "$ROOT/submission" --results "$RESULTS"
code=$?
if [ ! -s "$RESULTS" ]; then
  printf '{{"score": 0, "output": "%s", "tests": []}}\\n' \\
    "The autograder could not run (exit $code); nothing was scored: tell your instructor." \\
    > "$RESULTS"
fi
exit $code
"""

# What the grader needs of the project: the package, the grader and how to install them
# (the masters folder holds only the bundled lab's master).
SOURCES = ("kafkalite", "grader", "pyproject.toml", "README.md")
# requirements.txt's packages that grading never imports (Spark's: unless the lab uses it)
NOT_FOR_GRADING = {
    "jupyterlab", "playwright", "pytest", "pytest-asyncio", "pytest-timeout", "pytest-xdist",
    "hypothesis", "ruff", "mypy", "import-linter", "pandas-stubs", "types-docker",
}  # fmt: skip
SPARK = {"pyspark", "pyarrow"}
JAVA_SCRIPT = "scripts/install-java.sh"  # Spark's JVM, for the labs that use Spark
MASTERS = "grader/masters"
SKIPPED_PARTS = {"__pycache__", ".mypy_cache", ".ruff_cache"}


def build(master: Path, output: Path, repo: Path = REPO_ROOT) -> Path:
    """Write the zip for the lab whose master is ``master``."""
    output.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(output, "w", zipfile.ZIP_DEFLATED) as archive:
        _add_script(archive, "setup.sh", SETUP_SH)
        _add_script(archive, "run_autograder", RUN_AUTOGRADER.format(lab=master.stem))
        archive.writestr("requirements.txt", grading_requirements(master, repo))
        for name in SOURCES:
            for path in _files(repo / name):
                inside = path.relative_to(repo).as_posix()
                if not inside.startswith(MASTERS + "/"):
                    archive.write(path, inside)
        archive.write(master, f"{MASTERS}/{master.name}")
        if uses_spark(master):
            archive.write(repo / JAVA_SCRIPT, JAVA_SCRIPT)
    return output


def grading_requirements(master: Path, repo: Path = REPO_ROOT) -> str:
    """``requirements.txt`` without what grading ``master`` never imports."""
    skipped = NOT_FOR_GRADING | (set() if uses_spark(master) else SPARK)
    kept = []
    for line in (repo / "requirements.txt").read_text().splitlines():
        name = line.split("==", maxsplit=1)[0].strip().lower()
        if line.strip() and not line.startswith("#") and name not in skipped:
            kept.append(line)
    return "\n".join(kept) + "\n"


def _add_script(archive: zipfile.ZipFile, name: str, text: str) -> None:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFREG | 0o755) << 16
    archive.writestr(info, text)


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file() and not SKIPPED_PARTS & set(p.parts))
