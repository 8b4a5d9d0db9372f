"""Labs as assignments: one master notebook each, split by otter-grader.

A lab's master notebook (``grader/masters/NN-title.ipynb``) holds the solutions and the
hidden tests. ``otter assign`` splits it into the student version (solutions replaced by
``...``, hidden tests removed; committed as ``labs/NN-title.ipynb``) and the autograder
version (every test, one otter test file per question), which is what ``grader.runner``
grades against. Splitting takes about two seconds and is done on demand into a cache
keyed by the master's content, so a batch of submissions splits once.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import otter.assign

REPO_ROOT = Path(__file__).resolve().parent.parent
MASTERS = REPO_ROOT / "grader" / "masters"
LABS = REPO_ROOT / "labs"
CACHE = Path(tempfile.gettempdir()) / "kafkalite-grader-assignments"
SPLIT_FORMAT = b"2"  # part of the cache key: a change to how splits are written renews them


class AssignmentError(Exception):
    """A lab that cannot be found or split: a one-line reason."""


@dataclass(frozen=True, slots=True)
class Assignment:
    """One lab, split: the student notebook and the autograder's test files."""

    master: Path
    student_notebook: Path
    test_files: list[Path]

    @property
    def name(self) -> str:
        return self.master.stem

    @property
    def exercises(self) -> frozenset[str]:
        """The questions' names: most are the name of the function the student writes."""
        return frozenset(path.stem for path in self.test_files)


def find_master(lab: str, masters: Path = MASTERS) -> Path:
    """The master of a lab given as ``04``, ``4``, ``04-leader-failover`` or a path."""
    if lab.endswith(".ipynb") and Path(lab).is_file():
        return Path(lab).resolve()
    number = lab.split("-", maxsplit=1)[0]
    prefix = number.zfill(2) if number.isdigit() else lab
    found = sorted(masters.glob(f"{prefix}*.ipynb"))
    if len(found) != 1:
        known = ", ".join(p.stem for p in sorted(masters.glob("*.ipynb"))) or "none"
        raise AssignmentError(f"no single lab matches {lab!r} (labs: {known})")
    return found[0]


def split(master: Path, cache: Path = CACHE) -> Assignment:
    """Split ``master`` with otter assign (cached by content)."""
    digest = hashlib.sha256(SPLIT_FORMAT + master.read_bytes()).hexdigest()[:16]
    out = cache / f"{master.stem}-{digest}"
    if not (out / "done").exists():
        _assign(master, out)
    autograder = out / "autograder"
    return Assignment(
        master=master,
        student_notebook=out / "student" / master.name,
        test_files=sorted((autograder / "tests").glob("*.py")),
    )


def _tests_as_files(autograder: Path, master: Path) -> None:
    """A lab keeps its tests in the notebook's metadata (``tests: files: false``), so the
    student notebook's ``grader.check`` needs no tests folder beside it. The grader runs
    one case per sandbox from a test file: write each question's test out as
    the file ``otter assign`` would have written with ``files: true``."""
    notebook = json.loads((autograder / master.name).read_text())
    tests = notebook["metadata"].get("otter", {}).get("tests", {})
    folder = autograder / "tests"
    folder.mkdir(exist_ok=True)
    for name, spec in tests.items():
        # an exception-format test (``tests: ok_format: false``) is stored as its file's text
        text = spec if isinstance(spec, str) else f"OK_FORMAT = True\n\ntest = {spec!r}\n"
        (folder / f"{name}.py").write_text(text)


def _assign(master: Path, out: Path) -> None:
    shutil.rmtree(out, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        # otter assign writes its result relative to the master: work on a private copy
        copy = Path(tmp) / master.name
        shutil.copy(master, copy)
        log = io.StringIO()
        try:
            with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
                otter.assign.main(
                    str(copy), str(Path(tmp) / "dist"), no_pdfs=True, no_run_tests=True
                )
        except Exception as exc:
            raise AssignmentError(
                f"otter assign failed on {master.name}: {exc}\n{log.getvalue()}"
            ) from exc
        shutil.move(Path(tmp) / "dist", out)
    _tests_as_files(out / "autograder", master)
    (out / "done").touch()


def student_version(assignment: Assignment) -> str:
    """The student notebook as committed under ``labs/``: otter's split, outputs cleared.
    Cell ids come from each cell's position and text: otter gives the cells it adds random
    ids, which would make every split differ from the committed one."""
    notebook = json.loads(assignment.student_notebook.read_text())
    for index, cell in enumerate(notebook["cells"]):
        if cell["cell_type"] == "code":
            cell["outputs"], cell["execution_count"] = [], None
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        cell["id"] = hashlib.sha256(f"{index}:{source}".encode()).hexdigest()[:8]
    return json.dumps(notebook, indent=1, ensure_ascii=False) + "\n"


def uses_spark(path: Path) -> bool:
    """Whether a master or a question's test file starts Spark (its grading needs Java,
    and more time per case: a JVM start or two)."""
    text = path.read_text()
    return "kafkalite.spark" in text or "pyspark" in text
