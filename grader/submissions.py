"""Where a submission's code is: the file given, or, in a folder (a Gradescope upload), the
lab's notebook among whatever else the student uploaded.

Students upload what they have: two notebooks (the lab and a scratch copy), the lab
renamed (``lab04 (1).ipynb``), a ``.py`` export beside it. The notebook is chosen by what it
is, not by its name: the one whose metadata names the lab (the student version carries
``metadata.otter.assignment_name``); else the one defining most of the lab's exercises; a
script only when there is no notebook. The choice is said in the results, with the files
left aside, so a student who uploaded the wrong file learns it from the feedback.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path

from grader.extract import extract, parse


class SubmissionError(Exception):
    """No gradable file where the submission should be: a one-line reason."""


@dataclass(frozen=True, slots=True)
class Chosen:
    path: Path
    note: str
    """One line for the results: which file was graded and why."""


def resolve(path: Path, lab: str = "", exercises: frozenset[str] = frozenset()) -> Chosen:
    """The file to grade at ``path`` for the lab named ``lab`` (its exercises' names help
    choose among notebooks that do not say which lab they are)."""
    path = Path(path)
    if path.is_file():
        if path.suffix not in (".ipynb", ".py"):
            raise SubmissionError(f"{path.name} is neither a notebook (.ipynb) nor a script (.py)")
        return Chosen(path, f"graded {path.name}")
    if not path.is_dir():
        raise SubmissionError(f"no submission at {path}")
    found = sorted(p for p in path.rglob("*") if _gradable(p, path))
    notebooks = [p for p in found if p.suffix == ".ipynb"]
    candidates = notebooks or [p for p in found if p.suffix == ".py"]
    if not candidates:
        raise SubmissionError(f"no notebook (.ipynb) or script (.py) in {path}")
    ranked = sorted(candidates, key=lambda p: _rank(p, lab, exercises), reverse=True)
    chosen = ranked[0]
    note = f"graded {chosen.relative_to(path)}"
    if len(found) > 1:
        why = _why(chosen, lab, exercises)
        others = ", ".join(str(p.relative_to(path)) for p in found if p != chosen)
        note += f" ({why}); not graded: {others}"
    return Chosen(chosen, note)


def _gradable(p: Path, root: Path) -> bool:
    parts = p.relative_to(root).parts
    hidden = any(part.startswith(".") or part == "__pycache__" for part in parts)
    return p.is_file() and p.suffix in (".ipynb", ".py") and not hidden and p.name != "__init__.py"


def _rank(p: Path, lab: str, exercises: frozenset[str]) -> tuple[bool, int, float]:
    return (_names_lab(p, lab), _exercises_defined(p, exercises), p.stat().st_mtime)


def _why(p: Path, lab: str, exercises: frozenset[str]) -> str:
    if _names_lab(p, lab):
        return f"its metadata names lab {lab}"
    defined = _exercises_defined(p, exercises)
    if defined:
        return f"it defines {defined} of the lab's {len(exercises)} exercises"
    return "the most recently changed"


def _names_lab(p: Path, lab: str) -> bool:
    if p.suffix != ".ipynb" or not lab:
        return False
    try:
        metadata = json.loads(p.read_text(encoding="utf-8")).get("metadata", {})
    except (UnicodeDecodeError, ValueError, AttributeError):
        return False
    otter = metadata.get("otter", {}) if isinstance(metadata, dict) else {}
    return isinstance(otter, dict) and otter.get("assignment_name") == lab


def _exercises_defined(p: Path, exercises: frozenset[str]) -> int:
    try:
        tree = parse(extract(p).source)
    except SyntaxError:
        return 0
    defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    return len(defined & exercises)
