"""From a student's submission to the module the tests import: definitions only.

A lab notebook does things at the top level — connects to the student's cluster, kills
brokers, plots — that must not run while grading. The grader keeps what an exercise
needs: imports, function and class definitions, and assignments of plain literal
constants; everything else (calls, loops, ``lab = connect()``, ``grader.check(...)``)
is left out. Tests then call the student's functions against the grading cluster.

A cell that does not parse is left out too, and said so: the tests whose functions it
held fail with that reason, while the rest of the submission is still graded.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path

KEPT = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


@dataclass(slots=True)
class Extracted:
    """The module source, and what could not be used (one line per problem)."""

    source: str
    problems: list[str] = field(default_factory=list)


def extract(path: Path) -> Extracted:
    """The definitions of a ``.ipynb`` or ``.py`` submission."""
    path = Path(path)
    if path.suffix == ".ipynb":
        try:
            notebook = json.loads(path.read_text(encoding="utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            return Extracted("", [f"{path.name} is not a readable notebook ({exc})"])
        return from_notebook(notebook)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        return Extracted("", [f"{path.name} is not UTF-8 text ({exc})"])
    return from_cells([("the file", text)])


def from_notebook(notebook: dict[str, object]) -> Extracted:
    cells = notebook.get("cells")
    if not isinstance(cells, list):
        return Extracted("", ["the notebook has no cells"])
    code = []
    for number, cell in enumerate(cells, start=1):
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            text = "".join(source) if isinstance(source, list) else str(source)
            code.append((f"cell {number}", text))
    return from_cells(code)


def from_cells(cells: list[tuple[str, str]]) -> Extracted:
    """Keep the definitions of each cell that parses (after dropping IPython magics)."""
    kept: list[str] = []
    problems: list[str] = []
    for where, source in cells:
        try:
            tree = ast.parse(_without_magics(source))
        except SyntaxError as exc:
            problems.append(f"{where} has a syntax error (line {exc.lineno}: {exc.msg}); skipped")
            continue
        kept.extend(ast.unparse(node) for node in tree.body if _keep(node))
    return Extracted("\n\n".join(kept) + "\n", problems)


def _keep(node: ast.stmt) -> bool:
    if isinstance(node, KEPT):
        return True
    if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
        try:
            ast.literal_eval(node.value)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            return False
        return True
    return False


def _without_magics(text: str) -> str:
    """IPython's ``%magic`` and ``!shell`` lines are not Python; they never define anything."""
    return "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line for line in text.splitlines()
    )
