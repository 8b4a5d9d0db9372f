"""From a student's submission to the module the sandbox loads: definitions only.

A lab notebook does things at the top level — connects to the student's cluster, kills
brokers, plots — that must not run while grading. The grader keeps what an exercise
needs: imports, function and class definitions, and constants: assignments of literals,
and of values built only from literals, other kept constants and a few constructors that
do nothing but hold data (``ORDERS = TopicPartition("orders", 0)``, ``Path("out.json")``).
Everything else (calls, loops, ``lab = connect()``, ``grader.check(...)``) is left out,
and an assigned name left out is remembered with the reason, so that a function that
uses it is told why it is missing. Tests then call the student's functions.

Each kept statement is copied as the student wrote it (comments and all), and the
module's lines map back to their cells: feedback points at "cell 12, line 4", not at a
line of a file the student never saw.

A cell that does not parse is left out too, and said so: the tests whose functions it
held fail with that reason, while the rest of the submission is still graded.
"""

from __future__ import annotations

import ast
import json
import threading
from dataclasses import dataclass, field
from pathlib import Path

_PARSING = threading.Lock()
KEPT = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
# Constructors that only hold the data they are given, by the module they come from.
DATA_CONSTRUCTORS = {
    "kafka": {"TopicPartition", "OffsetAndMetadata"},
    "kafka.structs": {"TopicPartition", "OffsetAndMetadata"},
    "pathlib": {"Path", "PurePath", "PurePosixPath"},
    "decimal": {"Decimal"},
    "datetime": {"timedelta"},
    "fractions": {"Fraction"},
}
BUILTIN_DATA = {"frozenset", "set", "tuple", "list", "dict", "range", "int", "float", "str",
                "bytes", "bool", "complex"}  # fmt: skip


@dataclass(slots=True)
class Extracted:
    """The module source, what could not be used (one line per problem), where each of
    its lines came from, and the names assigned at the top level that were left out."""

    source: str
    problems: list[str] = field(default_factory=list)
    lines: list[tuple[str, int]] = field(default_factory=list)
    """Line n of ``source`` (1-based) came from ``lines[n - 1]``: (cell, line in it)."""
    dropped: dict[str, str] = field(default_factory=dict)
    """Name -> why its assignment was left out ("it calls write_payments(...)")."""

    def origin(self, line: int) -> tuple[str, int] | None:
        return self.lines[line - 1] if 0 < line <= len(self.lines) else None


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
    return from_cells([("your file", text)])


def from_notebook(notebook: object) -> Extracted:
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    if not isinstance(cells, list):
        return Extracted("", ["the notebook has no cells"])
    code = []
    for number, cell in enumerate(cells, start=1):
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            text = "".join(source) if isinstance(source, list) else str(source)
            code.append((f"cell {number}", text))
    return from_cells(code)


def parse(source: str) -> ast.Module:
    """``ast.parse``, one thread at a time. CPython 3.11's AST constructor keeps its
    recursion depth in per-interpreter state, not per thread: when a garbage collection
    inside one parse runs finalizers (Python code, e.g. a KafkaProducer's ``__del__``,
    which flushes for up to a second), another thread may run, and a parse there moves
    the shared depth: the first one fails with "SystemError: AST constructor recursion
    depth mismatch" (cpython gh-106905). ``grader batch`` grades submissions in threads:
    a batch of 20 stopped on it after 19 minutes."""
    with _PARSING:
        return ast.parse(source)


def from_cells(cells: list[tuple[str, str]]) -> Extracted:
    """Keep the definitions of each cell that parses (after dropping IPython magics)."""
    out = Extracted("")
    chunks: list[str] = []
    scope = _Scope()
    for where, source in cells:
        text = _without_magics(source)
        try:
            tree = parse(text)
        except SyntaxError as exc:
            out.problems.append(
                f"{where} has a syntax error (line {exc.lineno}: {exc.msg}); skipped"
            )
            continue
        lines = text.splitlines()
        for node in tree.body:
            if not scope.keep(node, out.dropped):
                continue
            first = min([node.lineno, *(d.lineno for d in _decorators(node))])
            last = node.end_lineno or node.lineno
            if chunks:
                chunks.append("")
                out.lines.append((where, 0))
            chunks.extend(lines[first - 1 : last])
            out.lines.extend((where, n) for n in range(first, last + 1))
    out.source = "\n".join(chunks) + "\n" if chunks else "\n"
    return out


def _decorators(node: ast.stmt) -> list[ast.expr]:
    return list(getattr(node, "decorator_list", []))


class _Scope:
    """What the module has kept so far: which names are data constructors (by their
    imports) and which are kept constants, to judge the next assignment by."""

    def __init__(self) -> None:
        self.constructors = set(BUILTIN_DATA)
        self.constants: set[str] = set()

    def keep(self, node: ast.stmt, dropped: dict[str, str]) -> bool:
        if isinstance(node, ast.ImportFrom):
            allowed = DATA_CONSTRUCTORS.get(node.module or "", set())
            for alias in node.names:
                name = alias.asname or alias.name
                if alias.name in allowed:
                    self.constructors.add(name)
                else:
                    self.constructors.discard(name)
            return True
        if isinstance(node, KEPT):
            for name in _defined(node):
                self.constructors.discard(name)
                self.constants.discard(name)
                dropped.pop(name, None)
            return True
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            reason = self._unsafe(node.value)
            if reason is None and len(names) == len(targets):
                self.constants.update(names)
                for name in names:
                    dropped.pop(name, None)
                return True
            for name in names:
                dropped[name] = reason or "it is not assigned to a plain name"
                self.constants.discard(name)
        return False

    def _unsafe(self, value: ast.expr) -> str | None:
        """None if ``value`` is data only; else why it is not (in the student's terms)."""
        for node in ast.walk(value):
            if isinstance(node, ast.Call):
                called = ast.unparse(node.func)
                if not (isinstance(node.func, ast.Name) and node.func.id in self.constructors):
                    return f"it calls `{called}(...)`, which could act on a cluster or a file"
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                if node.id not in self.constants and node.id not in self.constructors:
                    return f"it uses `{node.id}`, which is not a constant the grader keeps"
            elif not isinstance(node, _DATA_NODES):
                return "it is computed, not a constant"
        return None


_DATA_NODES = (
    ast.Constant, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Call, ast.Name, ast.Load,
    ast.keyword, ast.UnaryOp, ast.USub, ast.UAdd, ast.BinOp, ast.Add, ast.Sub, ast.Mult,
    ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.JoinedStr, ast.FormattedValue,
)  # fmt: skip


def _defined(node: ast.stmt) -> list[str]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        return [(a.asname or a.name).split(".")[0] for a in node.names]
    return (
        [node.name]
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        else []
    )


def _without_magics(text: str) -> str:
    """IPython's ``%magic`` and ``!shell`` lines are not Python; they never define anything."""
    return "\n".join(
        "" if line.lstrip().startswith(("%", "!")) else line for line in text.splitlines()
    )
